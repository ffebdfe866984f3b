#pragma once
// A sweep's exit code: a run in which a point failed (training diverged, a simulation child
// died, a rank could not start) ends with exit 1 after every other point has run and been
// written, so that a script or CI sees it; points skipped or that do not fit are answers, not
// failures.
#include <vector>

#include "tessera/core/result/result_schema.hpp"

namespace tessera::app {

// kExitOk, or kExitFailure after writing failed_points_summary as an error to stderr.
int sweep_exit_code(const std::vector<PointResult>& points);

}  // namespace tessera::app
