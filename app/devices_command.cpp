#include <iostream>

#include "command_guard.hpp"
#include "commands.hpp"
#include "tessera/core/common/quantity.hpp"
#include "tessera/kernels/device_inventory.hpp"

namespace tessera::app {

void add_devices_command(CLI::App& cli, Action& action) {
  auto* command =
      cli.add_subcommand("devices", "List this machine's compute devices and their libraries");
  command->callback([&action] {
    action = [] {
      return run_guarded([] {
        const auto inventory = kernels::discover_devices();
        for (const auto& device : inventory.devices) {
          std::cout << device.kind << ":" << device.index << "  " << device.name << ", "
                    << device.compute_units << (device.kind == "cpu" ? " cores" : " SMs") << ", "
                    << format_bytes(device.memory_bytes) << "  [" << device.library << "]\n";
        }
        for (const auto& note : inventory.notes) std::cout << note << "\n";
        std::cout << "libraries: " << kernels::cpu_library_versions() << "; "
                  << kernels::cuda_library_versions() << "\n";
        return kExitOk;
      });
    };
  });
}

}  // namespace tessera::app
