#include "memory_ops.hpp"

namespace tessera {

std::vector<StepOp> memory_ops(const ModelGraph& model, const std::vector<MemoryEvent>& events,
                               std::int64_t micro_batch, bool overlap_copies) {
  std::vector<StepOp> ops;
  for (const auto& event : events) {
    const auto& name = event.tensor < model.layers().size()
                           ? model.layers()[event.tensor].layer.name
                           : std::string("the stage");
    StepOp op{.category = OpCategory::offload,
              .layer = event.tensor,
              .bytes = event.bytes,
              .memory = event.use,
              .micro_batch = event.tensor < model.layers().size() ? micro_batch : 0};
    switch (event.kind) {
      case MemoryEventKind::allocate:
        op.kind = StepOpKind::allocate;
        op.label = "allocate " + to_string(event.use) + " (" + name + ")";
        break;
      case MemoryEventKind::release:
        op.kind = StepOpKind::release;
        op.label = "release " + to_string(event.use) + " (" + name + ")";
        break;
      case MemoryEventKind::offload_start:
        op.kind = StepOpKind::offload_start;
        op.label = "offload " + name + " to host";
        break;
      case MemoryEventKind::offload_wait:
        op.kind = StepOpKind::offload_wait;
        op.label = "wait for the offload of " + name;
        break;
      case MemoryEventKind::prefetch_start:
        op.kind = StepOpKind::prefetch_start;
        op.label = "prefetch " + name + " from host";
        break;
      case MemoryEventKind::prefetch_wait:
        op.kind = StepOpKind::prefetch_wait;
        op.label = "wait for the prefetch of " + name;
        break;
    }
    const bool starts_copy =
        op.kind == StepOpKind::offload_start || op.kind == StepOpKind::prefetch_start;
    ops.push_back(std::move(op));
    if (starts_copy && !overlap_copies) {
      StepOp wait = ops.back();
      const bool offload = wait.kind == StepOpKind::offload_start;
      wait.kind = offload ? StepOpKind::offload_wait : StepOpKind::prefetch_wait;
      wait.label = std::string(offload ? "wait for the offload of " : "wait for the prefetch of ") +
                   name + " (copied on the compute cores)";
      ops.push_back(std::move(wait));
    }
  }
  return ops;
}

}  // namespace tessera
