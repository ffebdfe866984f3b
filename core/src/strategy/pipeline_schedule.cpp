#include "tessera/core/strategy/pipeline_schedule.hpp"

#include <algorithm>

namespace tessera {

std::vector<PipelinePass> pipeline_passes(int stage, int stages, std::int64_t micro_batches,
                                          PipelineSchedule schedule) {
  std::vector<PipelinePass> passes;
  if (schedule == PipelineSchedule::gpipe) {
    for (std::int64_t k = 0; k < micro_batches; ++k) passes.push_back({true, k});
    for (std::int64_t k = micro_batches; k-- > 0;) passes.push_back({false, k});
    return passes;
  }
  // Stage s fills the pipeline with the forwards the later stages need before its first
  // backward comes back, then alternates, then drains.
  const std::int64_t warmup = std::min<std::int64_t>(stages - stage - 1, micro_batches);
  std::int64_t forward = 0, backward = 0;
  for (; forward < warmup; ++forward) passes.push_back({true, forward});
  while (forward < micro_batches) {
    passes.push_back({true, forward++});
    passes.push_back({false, backward++});
  }
  while (backward < micro_batches) passes.push_back({false, backward++});
  return passes;
}

}  // namespace tessera
