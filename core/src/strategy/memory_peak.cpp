#include "tessera/core/strategy/memory_peak.hpp"

#include <algorithm>

#include "tessera/core/strategy/pipeline_schedule.hpp"

namespace tessera {

MemoryPeak peak_of(const ModelGraph& model, const ShardPlan& plan, const StageMemoryPlan& memory) {
  MemoryPeak peak;
  std::array<double, kMemoryUses> in_use{};
  double total = 0, host = 0;
  auto apply = [&](const std::vector<MemoryEvent>& events) {
    for (const auto& event : events) {
      const auto use = static_cast<std::size_t>(event.use);
      switch (event.kind) {
        case MemoryEventKind::allocate:
          in_use[use] += event.bytes;
          total += event.bytes;
          break;
        case MemoryEventKind::release:
          in_use[use] -= event.bytes;
          total -= event.bytes;
          break;
        case MemoryEventKind::offload_start:
          host += event.bytes;
          break;
        case MemoryEventKind::prefetch_wait:
          host -= event.bytes;
          break;
        case MemoryEventKind::offload_wait:
        case MemoryEventKind::prefetch_start:
          break;
      }
      peak.host_bytes = std::max(peak.host_bytes, host);
      if (total > peak.total_bytes) {
        peak.total_bytes = total;
        peak.by_use = in_use;
      }
    }
  };
  apply(memory.at_start);
  const std::size_t layers = model.layers().size();
  const auto& config = plan.config;
  for (const auto& pass :
       pipeline_passes(memory.stage, plan.stages, config.micro_batches, config.schedule)) {
    if (pass.forward) {
      for (std::size_t i = 0; i < layers; ++i) {
        apply(memory.at(i, MemoryMoment::before_forward));
        apply(memory.at(i, MemoryMoment::after_forward));
      }
    } else {
      for (std::size_t i = layers; i-- > 0;) {
        apply(memory.at(i, MemoryMoment::before_backward));
        apply(memory.at(i, MemoryMoment::after_recompute));
        apply(memory.at(i, MemoryMoment::after_backward));
      }
    }
  }
  apply(memory.at_end);
  return peak;
}

}  // namespace tessera
