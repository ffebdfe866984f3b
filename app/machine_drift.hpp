#pragma once
// How fast this machine ran at each moment of a validate-sim run (before profiling, before and
// after training), so that a comparison's error can be told apart from the machine's own drift:
// the profile is measured minutes before the real run, and a shared machine may speed up or slow
// down in between. Each sample runs kernels::measure_machine_speed in this process, alone, on
// the device kind the ranks use.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tessera/kernels/profile/machine_description.hpp"

namespace tessera::app {

class MachineDrift {
 public:
  explicit MachineDrift(std::string device) : device_(std::move(device)) {}

  void sample(std::int64_t ranks, const std::string& moment);

  // ranks,moment,memory_bandwidth_bytes_per_second,fp32_flops_per_second
  std::string to_csv() const;
  // One line per sample, each rate also as its change from the rank count's first sample.
  std::string report() const;

 private:
  struct Sample {
    std::int64_t ranks = 0;
    std::string moment;
    kernels::MachineSpeed speed;
  };
  std::string device_;
  std::vector<Sample> samples_;
};

}  // namespace tessera::app
