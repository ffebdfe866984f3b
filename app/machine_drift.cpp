#include "machine_drift.hpp"

#include <cstdio>
#include <sstream>

#include "scenario_target.hpp"
#include "tessera/core/common/quantity.hpp"
#include "tessera/kernels/device.hpp"

namespace tessera::app {
namespace {

std::string change(double now, double first) {
  char text[32];
  std::snprintf(text, sizeof text, " (%+.1f%%)", 100.0 * (now / first - 1.0));
  return text;
}

}  // namespace

void MachineDrift::sample(std::int64_t ranks, const std::string& moment) {
  // Opened for each sample and closed after it: the ranks launched in between need the device.
  const auto device = open_device_option(device_);
  samples_.push_back({ranks, moment, kernels::measure_machine_speed(*device)});
}

std::string MachineDrift::to_csv() const {
  std::ostringstream out;
  out.precision(9);
  out << "ranks,moment,memory_bandwidth_bytes_per_second,fp32_flops_per_second\n";
  for (const auto& s : samples_) {
    out << s.ranks << "," << s.moment << "," << s.speed.memory_bandwidth_bytes_per_second << ","
        << s.speed.fp32_flops_per_second << "\n";
  }
  return out.str();
}

std::string MachineDrift::report() const {
  std::ostringstream out;
  out << "this machine's speed while comparing (" << device_
      << ", one process alone; change from the first sample of each rank count):\n";
  const Sample* first = nullptr;
  for (const auto& s : samples_) {
    if (!first || first->ranks != s.ranks) first = &s;
    const bool later = first != &s;
    out << "  " << s.ranks << " rank(s), " << s.moment << ": GEMM "
        << format_flops(s.speed.fp32_flops_per_second) << "/s"
        << (later ? change(s.speed.fp32_flops_per_second, first->speed.fp32_flops_per_second) : "")
        << ", copy " << format_bytes(s.speed.memory_bandwidth_bytes_per_second) << "/s"
        << (later ? change(s.speed.memory_bandwidth_bytes_per_second,
                           first->speed.memory_bandwidth_bytes_per_second)
                  : "")
        << "\n";
  }
  return out.str();
}

}  // namespace tessera::app
