#pragma once
// Device memory in use over a stage's events in program order (its pipeline passes, in the
// order the plan's schedule gives them), without times: the peak and what it was made of then.
#include <array>

#include "tessera/core/strategy/memory_plan.hpp"

namespace tessera {

struct MemoryPeak {
  double total_bytes = 0;
  std::array<double, kMemoryUses> by_use{};  // at the peak
  double host_bytes = 0;                     // the most held in host memory at once
};
MemoryPeak peak_of(const ModelGraph& model, const ShardPlan& plan, const StageMemoryPlan& memory);

}  // namespace tessera
