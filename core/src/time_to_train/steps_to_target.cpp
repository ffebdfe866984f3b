// Steps to the target quality at a global batch: log-log interpolation of a table, or the
// critical-batch form; and the time those steps take.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "tessera/core/time_to_train/time_to_train.hpp"

namespace tessera {
namespace {

// Linear in log(batch)-log(steps) on the segment [a, b], extended beyond its ends: measured
// steps-to-result curves are close to straight lines there (Shallue et al. 2018, Figure 1: slope
// -1 in perfect scaling, flattening towards 0 at maximal data parallelism).
double log_log(const StepsAtBatch& a, const StepsAtBatch& b, double batch) {
  const double x0 = std::log(static_cast<double>(a.global_batch));
  const double x1 = std::log(static_cast<double>(b.global_batch));
  const double y0 = std::log(a.steps), y1 = std::log(b.steps);
  return std::exp(y0 + (std::log(batch) - x0) * (y1 - y0) / (x1 - x0));
}

StepsToTarget from_table(const std::vector<StepsAtBatch>& rows, std::int64_t global_batch) {
  if (rows.size() < 2) throw std::logic_error("a steps-to-target table needs two rows");
  const double batch = static_cast<double>(global_batch);
  StepsToTarget result;
  result.extrapolated =
      global_batch < rows.front().global_batch || global_batch > rows.back().global_batch;
  std::size_t segment = 0;  // rows[segment], rows[segment + 1]
  while (segment + 2 < rows.size() && global_batch > rows[segment + 1].global_batch) ++segment;
  const auto exact = std::find_if(rows.begin(), rows.end(), [&](const StepsAtBatch& row) {
    return row.global_batch == global_batch;
  });
  result.steps =
      exact != rows.end() ? exact->steps : log_log(rows[segment], rows[segment + 1], batch);
  return result;
}

}  // namespace

StepsToTarget steps_to_target(const StatisticalEfficiency& efficiency, std::int64_t global_batch) {
  if (global_batch < 1) throw std::invalid_argument("a global batch must be positive");
  StepsToTarget result;
  switch (efficiency.target) {
    case TrainingTarget::table:
      result = from_table(efficiency.table, global_batch);
      break;
    case TrainingTarget::critical_batch:
      // McCandlish et al. 2018: S = S_min (1 + B_noise / B).
      result.steps = efficiency.min_steps *
                     (1.0 + efficiency.critical_batch / static_cast<double>(global_batch));
      break;
    case TrainingTarget::none:
      throw std::logic_error("steps to target asked of a scenario without a training target");
  }
  result.epochs = result.steps * static_cast<double>(global_batch) / efficiency.epoch_samples;
  return result;
}

double time_to_train_seconds(const StepsToTarget& target, const StatisticalEfficiency& efficiency,
                             std::int64_t global_batch, double step_seconds,
                             double first_epoch_step_seconds) {
  const double steps_per_epoch = efficiency.epoch_samples / static_cast<double>(global_batch);
  const double first_epoch_steps = std::min(target.steps, steps_per_epoch);
  const double first_step = first_epoch_step_seconds > 0 ? first_epoch_step_seconds : step_seconds;
  return first_epoch_steps * first_step + (target.steps - first_epoch_steps) * step_seconds;
}

}  // namespace tessera
