#include "tessera/core/result/measurement_length.hpp"

#include <algorithm>
#include <cmath>

namespace tessera {

StepCounts steps_for_seconds(const RealSection& scenario, double seconds, double step_seconds) {
  StepCounts counts{.warmup = scenario.warmup_steps, .measured = scenario.measured_steps};
  if (!(seconds > 0) || !(step_seconds > 0) || !std::isfinite(seconds / step_seconds)) {
    return counts;
  }
  const auto steps_in = [&](double duration) {
    return static_cast<std::int64_t>(
        std::min(std::ceil(duration / step_seconds), static_cast<double>(kMaxMeasuredSteps)));
  };
  counts.measured = std::max(counts.measured, steps_in(seconds));
  counts.warmup = std::max(counts.warmup, steps_in(seconds / 10));
  return counts;
}

}  // namespace tessera
