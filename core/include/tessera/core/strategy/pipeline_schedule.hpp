#pragma once
// The order in which a model-parallel stage runs the forward and backward passes of its
// micro-batches in one step (GPipe, Huang et al. 2019; one-forward-one-backward, the flushing
// schedule of PipeDream, Narayanan et al. 2019 / 2021): the step program follows it, and so the
// memory the stage holds at once.
#include <cstdint>
#include <vector>

#include "tessera/core/scenario/scenario.hpp"  // PipelineSchedule, the scenario's choice

namespace tessera {

struct PipelinePass {
  bool forward = true;
  std::int64_t micro_batch = 0;
  bool operator==(const PipelinePass&) const = default;
};

// The passes stage `stage` of `stages` runs, in order: each micro-batch's forward and backward
// once. One micro-batch (or one stage) gives forward, then backward.
std::vector<PipelinePass> pipeline_passes(int stage, int stages, std::int64_t micro_batches,
                                          PipelineSchedule schedule);

}  // namespace tessera
