#pragma once
// This machine as a cluster file the simulator can load, from figures measured on it: the
// device's name (so profiles measured here match), memory, achieved memory bandwidth and FLOP/s,
// host link bandwidth. What cannot be measured from one device (network, file system) is written
// as a marked assumption.
#include <string>

#include "tessera/core/profile_database.hpp"

namespace tessera::kernels {

class Device;

struct MachineFigures {
  std::string device_name;
  std::string library;
  double memory_bytes = 0;
  double memory_bandwidth_bytes_per_second = 0;     // on-device copy: bytes read + written / s
  double fp32_flops_per_second = 0;                 // a large matrix multiply, achieved
  double host_link_bandwidth_bytes_per_second = 0;  // host -> device from pinned memory
  int devices_per_node = 1;
};

// Runs the two measurements it needs (a 1 GiB-class on-device copy and an FC-layer GEMM) and
// reads the host link figure from `copies` when profile_copies filled it (else measures it).
MachineFigures measure_machine(Device& device, const ProfileDatabase& copies);

// A cluster file (scenarios/clusters format) of one node with `devices_per_node` such devices;
// figures measured above are used with efficiency 1 (they are achieved rates).
std::string cluster_yaml(const MachineFigures& figures, const std::string& measured_utc);

}  // namespace tessera::kernels
