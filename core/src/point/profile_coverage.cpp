#include "tessera/core/point/profile_coverage.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "tessera/core/point/profile_plan.hpp"

namespace tessera {
namespace {

// A newline cannot occur in a field, so it separates the key's parts unambiguously.
std::string kernel_key(const std::string& op, Direction direction, const std::string& shape,
                       DType dtype) {
  return op + "\n" + to_string(direction) + "\n" + shape + "\n" + to_string(dtype);
}

}  // namespace

ProfileCoverage profile_coverage(const ProfileDatabase& profiles, const LoadedScenario& scenario) {
  ProfileCoverage coverage;
  coverage.device = scenario.cluster.gpu.model;
  // The micro-batches the cost model may look up per kernel: the planner's candidates for a
  // convolution, the undivided batch otherwise (kernels_to_profile lists both), 1 for an update.
  std::map<std::string, std::set<std::int64_t>> wanted;
  for (const auto& kernel : kernels_to_profile(scenario)) {
    auto& sizes = wanted[kernel_key(kernel.op, kernel.direction, kernel.shape, kernel.dtype)];
    sizes.insert(kernel.micro_batches.begin(), kernel.micro_batches.end());
  }
  for (const auto& update : parameter_kernels_to_profile(scenario)) {
    wanted[kernel_key(update.op, Direction::forward, update.shape, update.dtype)].insert(1);
  }
  coverage.kernels = wanted.size();
  std::set<std::string> measured;
  std::set<std::string> devices;
  for (auto& row : profiles.rows()) {
    ++coverage.rows;
    devices.insert(row.device);
    if (describes_machine(row.op)) {
      ++coverage.machine_rows;
      continue;
    }
    const auto key = kernel_key(row.op, row.direction, row.shape, row.dtype);
    const auto it = wanted.find(key);
    if (row.device == coverage.device && it != wanted.end() &&
        it->second.contains(row.micro_batch)) {
      ++coverage.matching_rows;
      if (row.ok) measured.insert(key);  // a failed algorithm's row times nothing
    } else {
      coverage.unmatched.push_back(std::move(row));
    }
  }
  coverage.measured_kernels = measured.size();
  coverage.devices.assign(devices.begin(), devices.end());
  std::sort(coverage.unmatched.begin(), coverage.unmatched.end(),
            [](const ProfileEntry& a, const ProfileEntry& b) {
              return std::tie(a.where.file, a.where.line) < std::tie(b.where.file, b.where.line);
            });
  return coverage;
}

}  // namespace tessera
