#pragma once
// This machine as a cluster file the simulator can load, from figures measured on it: the
// device's name (so profiles measured here match), memory, achieved memory bandwidth and FLOP/s,
// host link bandwidth. What cannot be measured from one device (network, file system) is written
// as a marked assumption. Several CPU ranks of one machine (MPI over shared memory) become one
// node of that many devices whose GPU-GPU links carry the send/receive figures measured between
// the ranks.
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/scenario/rank_jitter.hpp"

namespace tessera::kernels {

class Device;

struct MachineFigures {
  std::string device_name;
  std::string library;
  double memory_bytes = 0;
  double host_memory_bytes = 0;  // the host's physical memory (where offloaded maps go)
  double memory_bandwidth_bytes_per_second = 0;     // on-device copy: bytes read + written / s
  double fp32_flops_per_second = 0;                 // a large matrix multiply, achieved
  double host_link_bandwidth_bytes_per_second = 0;  // host -> device from pinned memory
  int devices_per_node = 1;
  // The ranks measured together (sharing this machine) and, with several, the point-to-point
  // link between two of them from MPI send/receive (0: none measured; the GPUs then talk over
  // their host links). devices_per_node may exceed `ranks` so that larger sweep points still
  // load; a point of `ranks` devices uses only its own links.
  int ranks = 1;
  double rank_link_bandwidth_bytes_per_second = 0;
  double rank_link_latency_seconds = 0;  // one way, whole route
  int cpu_cores = 0;                     // the cores the ranks share (0: not a CPU device)
  int threads_per_rank = 0;              // each rank's compute threads (OMP_NUM_THREADS)
  // False for CPU devices: their MPI all-reduces do not run beside compute (cluster_spec.hpp).
  bool overlaps_communication = true;
  // The ranks' slowdowns at the moments their passes measured (rank_passes.hpp); empty: none.
  RankJitter rank_jitter;
};

struct RankLink {
  double bandwidth_bytes_per_second = 0;
  double latency_seconds = 0;  // one way
};

// Fits time = latency + bytes / bandwidth to the "sendrecv" rows profile_collectives measured
// among `ranks` ranks (every rank sending to its right neighbour while receiving from its left
// one, as a halo exchange does), weighting each size by its relative error so that small messages
// set the latency and large ones the bandwidth. None when fewer than two sizes were measured.
std::optional<RankLink> fit_rank_link(const ProfileDatabase& database,
                                      const std::string& device_name, int ranks,
                                      const std::vector<double>& sizes_bytes);

// The two rates the description rests on: an on-device copy of 256 MiB (bytes read + written per
// second) and an FC-layer GEMM (FLOP/s), achieved now. Measured again at several moments they
// show how much the machine itself drifted (validate-sim), apart from any model's error.
struct MachineSpeed {
  double memory_bandwidth_bytes_per_second = 0;
  double fp32_flops_per_second = 0;
};
MachineSpeed measure_machine_speed(Device& device);

// Runs measure_machine_speed and reads the host link figure from `copies` when profile_copies
// filled it (else measures it).
MachineFigures measure_machine(Device& device, const ProfileDatabase& copies);

// A cluster file (scenarios/clusters format) of one node with `devices_per_node` such devices;
// figures measured above are used with efficiency 1 (they are achieved rates). With a measured
// rank link the node's GPUs are joined by nvswitch links carrying it (see the .cpp for why).
std::string cluster_yaml(const MachineFigures& figures, const std::string& measured_utc);

}  // namespace tessera::kernels
