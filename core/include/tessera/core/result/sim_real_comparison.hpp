#pragma once
// Measured against simulated, point by point: each point's step time from the real backend and
// from the simulator, the error of the prediction, their breakdowns side by side, and the mean
// absolute percentage error (MAPE) over the points both have. Used by `tessera validate-sim`.
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/result/result_schema.hpp"

namespace tessera {

struct PointComparison {
  std::int64_t point = 0;
  std::int64_t ranks = 0;  // GPUs (or CPU ranks) of the point
  std::string spatial_grid;
  bool compared = false;  // both results exist and are ok; otherwise `reason` says why not
  std::string reason;
  double measured_step_seconds = 0;
  double simulated_step_seconds = 0;
  double error_percent = 0;  // (simulated - measured) / measured, signed
  StepBreakdown measured;
  StepBreakdown simulated;
};

struct SimRealComparison {
  std::vector<PointComparison> points;  // in the order of `measured`
  std::optional<double> mape_percent;   // none when no point was compared
};

// Pairs each measured point with the simulated point of the same index. Points absent from
// `simulated`, or not ok on either side, are kept with the reason (their notes).
SimRealComparison compare_sim_real(const std::vector<PointResult>& measured,
                                   const std::vector<PointResult>& simulated);

// One row per point (compared or not) and a last row "MAPE"; times in seconds.
std::string comparison_to_csv(const SimRealComparison& comparison);
// Two tables for the terminal: step times with the error, then the breakdowns side by side.
std::string comparison_report(const SimRealComparison& comparison);

}  // namespace tessera
