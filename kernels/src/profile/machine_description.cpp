#include "tessera/kernels/profile/machine_description.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <sstream>

#include "tessera/kernels/device.hpp"
#include "tessera/kernels/layer_kernels.hpp"
#include "tessera/kernels/profile/kernel_profiler.hpp"

namespace tessera::kernels {
namespace {

// "123.4 GB/s": giga-prefixed, so the cluster parser reads it back without exponents.
std::string si(double value, const char* unit) {
  char text[64];
  std::snprintf(text, sizeof text, "%.6f G%s", value / 1e9, unit);
  return text;
}

std::string microseconds(double seconds) {
  char text[64];
  std::snprintf(text, sizeof text, "%.6f us", seconds * 1e6);
  return text;
}

std::string quoted(const std::string& text) {
  std::string result = "\"";
  for (char c : text) result += c == '"' ? '\'' : c;
  return result + "\"";
}

// The copies' size (the on-device rate and the host link's): 256 MiB of floats.
constexpr std::size_t kCopyFloats = (256u << 20) / sizeof(float);

}  // namespace

MachineSpeed measure_machine_speed(Device& device) {
  MachineSpeed speed;
  const ProfilerOptions options;
  auto from = device.allocate(kCopyFloats * sizeof(float));
  auto to = device.allocate(kCopyFloats * sizeof(float));
  device.fill(from->data(), kCopyFloats, 1.0f);
  const double copy_seconds = median_seconds(
      device, [&] { device.copy_on_device(from->data(), to->data(), kCopyFloats); }, options);
  speed.memory_bandwidth_bytes_per_second =
      2.0 * static_cast<double>(kCopyFloats * sizeof(float)) / copy_seconds;

  // A fully connected layer large enough to be compute-bound on any device.
  const std::int64_t batch = 1024, in = 2048, out = 2048;
  auto x = device.allocate(static_cast<std::size_t>(batch * in) * sizeof(float));
  auto w = device.allocate(static_cast<std::size_t>(in * out) * sizeof(float));
  auto y = device.allocate(static_cast<std::size_t>(batch * out) * sizeof(float));
  device.fill(x->data(), x->floats(), 0.5f);
  device.fill(w->data(), w->floats(), 0.25f);
  const double gemm_seconds = median_seconds(
      device,
      [&] {
        device.layers().fully_connected_forward(batch, in, out, x->data(), w->data(), nullptr,
                                                y->data());
      },
      options);
  speed.fp32_flops_per_second = 2.0 * static_cast<double>(batch * in * out) / gemm_seconds;
  return speed;
}

MachineFigures measure_machine(Device& device, const ProfileDatabase& copies) {
  MachineFigures figures;
  figures.device_name = device.info().name;
  figures.library = device.info().library;
  figures.memory_bytes = device.info().memory_bytes;
  figures.host_memory_bytes =
      static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
  figures.overlaps_communication = device.info().kind != "cpu";
  const MachineSpeed speed = measure_machine_speed(device);
  figures.memory_bandwidth_bytes_per_second = speed.memory_bandwidth_bytes_per_second;
  figures.fp32_flops_per_second = speed.fp32_flops_per_second;

  const double link_bytes = 256e6;
  const auto rows = copies.entries_for(figures.device_name, "copy_h2d_pinned", Direction::forward,
                                       transfer_shape(link_bytes), DType::float32);
  if (!rows.empty() && rows.front().time_seconds > 0) {
    figures.host_link_bandwidth_bytes_per_second = link_bytes / rows.front().time_seconds;
  } else {
    auto pinned = device.allocate_pinned_host(kCopyFloats * sizeof(float));
    auto on_device = device.allocate(kCopyFloats * sizeof(float));
    device.fill(pinned->data(), kCopyFloats, 1.0f);
    const double seconds = median_seconds(
        device, [&] { device.copy_to_device(pinned->data(), on_device->data(), kCopyFloats); },
        ProfilerOptions{});
    figures.host_link_bandwidth_bytes_per_second =
        static_cast<double>(kCopyFloats * sizeof(float)) / seconds;
  }
  return figures;
}

std::optional<RankLink> fit_rank_link(const ProfileDatabase& database,
                                      const std::string& device_name, int ranks,
                                      const std::vector<double>& sizes_bytes) {
  // Least squares on relative residuals: (latency + bytes * seconds_per_byte) / time - 1.
  double pp = 0, pq = 0, qq = 0, p1 = 0, q1 = 0;
  int rows_used = 0;
  for (double bytes : sizes_bytes) {
    const auto rows = database.entries_for(device_name, "sendrecv", Direction::forward,
                                           transfer_shape(bytes, ranks), DType::float32);
    if (rows.empty() || !(rows.front().time_seconds > 0)) continue;
    const double p = 1 / rows.front().time_seconds;
    const double q = bytes * p;
    pp += p * p;
    pq += p * q;
    qq += q * q;
    p1 += p;
    q1 += q;
    ++rows_used;
  }
  const double determinant = pp * qq - pq * pq;
  if (rows_used < 2 || !(determinant > 0)) return std::nullopt;
  double latency = (p1 * qq - q1 * pq) / determinant;
  double seconds_per_byte = (pp * q1 - pq * p1) / determinant;
  if (latency < 0 || !(seconds_per_byte > 0)) {
    // A negative intercept is noise around a latency too small to see: fit bandwidth alone.
    latency = 0;
    seconds_per_byte = q1 / qq;
  }
  return RankLink{.bandwidth_bytes_per_second = 1 / seconds_per_byte, .latency_seconds = latency};
}

std::string cluster_yaml(const MachineFigures& figures, const std::string& measured_utc) {
  // MPI ranks on one machine talk through shared memory: the sender copies into a shared segment
  // and the receiver out of it, each at its own core's pace, so every rank has its own link into
  // the exchange, i -> j loads rank i's and rank j's links, and disjoint pairs do not share. That
  // is the nvswitch model (a link per GPU to a switch). The pcie model routes the same way but
  // makes the GPU links the host links, which also carry host-to-device copies and here were
  // measured separately (a memcpy), so it would force two measured figures to be one.
  const bool rank_links = figures.ranks > 1 && figures.devices_per_node > 1 &&
                          figures.rank_link_bandwidth_bytes_per_second > 0;
  std::ostringstream yaml;
  yaml << "# This machine, measured by `tessera profile` on " << measured_utc << ".\n"
       << "# Bandwidths are per direction; latencies per link crossed.\n"
       << "name: this_machine\n"
       << "description: " << quoted(figures.device_name + " (" + figures.library + ")") << "\n"
       << "sources:\n"
       << "  - \"measured: device memory, on-device copy bandwidth, FC-layer GEMM FLOP/s, "
          "pinned host-to-device copy bandwidth\"\n";
  if (rank_links) {
    yaml << "  - \"measured: " << figures.ranks
         << " ranks on one machine, GPU-GPU links from MPI send/receive between them (bandwidth "
            "and latency fitted over message sizes; a route crosses two links, each half the "
            "latency)\"\n";
  }
  if (figures.cpu_cores > 0) {
    yaml << "  - \"measured: " << figures.ranks << " rank(s) sharing " << figures.cpu_cores
         << " CPU core(s), " << figures.threads_per_rank
         << " compute thread(s) each; every figure above was measured under that sharing\"\n";
  }
  if (!figures.overlaps_communication) {
    yaml << "  - \"no communication beside compute: CPU ranks compute on their cores and Open MPI "
            "progresses a gradient all-reduce only inside MPI calls, so the real backend sums "
            "each bucket at once\"\n";
  }
  if (!figures.rank_jitter.empty()) {
    yaml << "  - \"measured: rank_jitter, each rank's time of a pass over its kernels over its "
            "median pass, all "
         << figures.rank_jitter.slowdowns.front().size() << " ranks at once, at "
         << figures.rank_jitter.moments()
         << " moments (rank_pass rows: tessera profile's passes, or the passes between a real "
            "run's steps)\"\n";
  }
  yaml << "  - \"assumption: one node; 10 Gb/s NIC and network, unused by single-node runs\"\n"
       << "  - \"assumption: local disk as one file server of 1 GB/s\"\n"
       << "nodes: 1\n"
       << "gpus_per_node: " << figures.devices_per_node << "\n"
       << "gpu:\n"
       << "  model: " << quoted(figures.device_name) << "\n"
       << "  memory: " << si(figures.memory_bytes, "B") << "\n"
       << "  memory_bandwidth: " << si(figures.memory_bandwidth_bytes_per_second, "B/s") << "\n"
       << "  fp32_peak: " << si(figures.fp32_flops_per_second, "FLOP/s") << "\n"
       << "  compute_efficiency: 1\n"
       << "  memory_efficiency: 1\n"
       << "  overlaps_communication: " << (figures.overlaps_communication ? "true" : "false")
       << "\n"
       << "node:\n"
       << "  gpu_interconnect: " << (rank_links ? "nvswitch" : "pcie") << "\n";
  if (rank_links) {
    yaml << "  gpu_link_bandwidth: " << si(figures.rank_link_bandwidth_bytes_per_second, "B/s")
         << "\n"
         << "  gpu_link_latency: " << microseconds(figures.rank_link_latency_seconds / 2) << "\n";
  }
  yaml << "  pcie_bandwidth: " << si(figures.host_link_bandwidth_bytes_per_second, "B/s") << "\n"
       << "  pcie_latency: 1 us\n"
       << "  host_memory: "
       << si(figures.host_memory_bytes > 0 ? figures.host_memory_bytes : figures.memory_bytes, "B")
       << "\n"
       << "  nics: 1\n"
       << "  nic_bandwidth: 10 Gb/s\n"
       << "  nic_latency: 5 us\n"
       << "network:\n"
       << "  topology: fat_tree\n"
       << "  nodes_per_switch: 2\n"
       << "  oversubscription: 1\n"
       << "  link_bandwidth: 10 Gb/s\n"
       << "  link_latency: 1 us\n"
       << "filesystem:\n"
       << "  servers: 1\n"
       << "  server_bandwidth: 1 GB/s\n"
       << "  attachment_bandwidth: 16 GB/s\n"
       << "  latency: 50 us\n";
  if (!figures.rank_jitter.empty()) {
    yaml << "rank_jitter:\n  slowdowns:\n";
    for (const auto& moment : figures.rank_jitter.slowdowns) {
      yaml << "    - [";
      for (std::size_t r = 0; r < moment.size(); ++r) {
        // Within the range a cluster file takes: a pass ten times its median is the machine
        // stopped for a moment, not a speed.
        yaml << (r > 0 ? ", " : "") << std::clamp(moment[r], 0.1, 10.0);
      }
      yaml << "]\n";
    }
  }
  return yaml.str();
}

}  // namespace tessera::kernels
