// libFuzzer target: any byte string given to the cluster file parser must end in a cluster or an
// InputError. Any other exception, crash or sanitizer report is a bug.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "tessera/core/common/input_error.hpp"
#include "tessera/core/common/yaml_reader.hpp"
#include "tessera/core/scenario/cluster_spec.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto cluster = tessera::parse_cluster(tessera::parse_yaml_text(text, "fuzz.yaml"));
    // Every figure a loaded cluster hands the simulator is finite and not negative.
    for (double figure :
         {cluster.gpu.memory_bytes, cluster.gpu.memory_bandwidth_bytes_per_second,
          cluster.gpu.fp32_flops_per_second, cluster.gpu.tensor_flops_per_second,
          cluster.node.gpu_link_bandwidth_bytes_per_second,
          cluster.node.pcie_bandwidth_bytes_per_second, cluster.node.nic_bandwidth_bytes_per_second,
          cluster.network.link_bandwidth_bytes_per_second,
          cluster.filesystem.server_bandwidth_bytes_per_second,
          cluster.filesystem.latency_seconds}) {
      if (!std::isfinite(figure) || figure < 0) __builtin_trap();
    }
  } catch (const tessera::InputError&) {
    // The expected outcome for malformed input.
  }
  return 0;
}
