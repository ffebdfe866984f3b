#include "rank_cluster.hpp"

#include <algorithm>
#include <thread>

#include "tessera/core/common/atomic_file.hpp"
#include "tessera/core/cost/rank_passes.hpp"
#include "tessera/core/scenario/cluster_spec.hpp"
#include "tessera/kernels/device_inventory.hpp"
#include "tessera/kernels/profile/machine_description.hpp"

namespace tessera::app {

Machine measured_machine() {
  Machine machine;
  for (const auto& device : kernels::discover_devices().devices) {
    if (device.kind == "cuda") ++machine.cuda_devices;
  }
  machine.cpu_cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  return machine;
}

std::filesystem::path write_rank_cluster(const std::filesystem::path& directory,
                                         const ProfileDatabase& profiles,
                                         const ProfileDatabase& passes, int ranks,
                                         std::int64_t devices_per_node, const Machine& machine,
                                         int threads_per_rank, const std::string& file_name) {
  const auto single = load_cluster_file((directory / "this_machine.yaml").string());
  kernels::MachineFigures figures;
  figures.device_name = single.gpu.model;
  figures.library = single.description;
  figures.memory_bytes = single.gpu.memory_bytes;
  figures.memory_bandwidth_bytes_per_second = single.gpu.memory_bandwidth_bytes_per_second;
  figures.fp32_flops_per_second = single.gpu.fp32_flops_per_second;
  figures.host_link_bandwidth_bytes_per_second = single.node.pcie_bandwidth_bytes_per_second;
  figures.overlaps_communication = single.gpu.overlaps_communication;
  figures.ranks = ranks;
  figures.devices_per_node = static_cast<int>(std::max<std::int64_t>(ranks, devices_per_node));
  if (machine.cuda_devices == 0) {
    figures.cpu_cores = machine.cpu_cores;
    figures.threads_per_rank = threads_per_rank;
    // CPU ranks share the machine's memory, as the real backend's ranks do.
    figures.host_memory_bytes = single.node.host_memory_bytes;
    figures.memory_bytes = single.gpu.memory_bytes / ranks;
  }
  if (const auto link = kernels::fit_rank_link(profiles, figures.device_name, ranks,
                                               kernels::transfer_sizes_bytes())) {
    figures.rank_link_bandwidth_bytes_per_second = link->bandwidth_bytes_per_second;
    figures.rank_link_latency_seconds = link->latency_seconds;
  }
  figures.rank_jitter = rank_jitter_from_passes(passes, figures.device_name, ranks);
  const auto path = directory / file_name;
  write_file_atomically(path.string(), kernels::cluster_yaml(figures, "this validate-sim run"));
  return path;
}

}  // namespace tessera::app
