#include "sweep_outcome.hpp"

#include <iostream>

#include "command_guard.hpp"
#include "tessera/core/result/sweep_runner.hpp"

namespace tessera::app {

int sweep_exit_code(const std::vector<PointResult>& points) {
  const auto failed = failed_points_summary(points);
  if (failed.empty()) return kExitOk;
  std::cerr << "error: " << failed << "\n";
  return kExitFailure;
}

}  // namespace tessera::app
