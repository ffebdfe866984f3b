#include "tessera/core/strategy/recompute_segments.hpp"

#include <algorithm>

namespace tessera {

std::vector<std::optional<std::size_t>> recomputed_segment_ends(const ModelGraph& model,
                                                                const ShardPlan& plan, int stage) {
  const auto& layers = model.layers();
  std::vector<std::optional<std::size_t>> end_of(layers.size());
  auto on_stage = [&](std::size_t i) { return plan.layers[i].stage == stage; };
  std::vector<std::size_t> segment;  // the current segment's layers, in order
  // The furthest reader on the stage of any output before the layer at hand.
  std::size_t reach = 0;
  auto close = [&](std::size_t end) {
    if (segment.size() > 1) {
      for (auto i : segment) end_of[i] = end;
    }
    segment.clear();
  };
  std::optional<std::size_t> last;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (!on_stage(i)) continue;
    last = i;
    // A sample is kept whatever (the input buffers): it neither joins nor holds a segment open.
    if (layers[i].layer.kind == LayerKind::input) {
      close(i);
      continue;
    }
    segment.push_back(i);
    // A tensor received from another stage is kept, as a cut before the stage's first layer;
    // its readers here hold the segment open like any other output's.
    for (auto producer : layers[i].input_indices) {
      if (on_stage(producer)) continue;
      for (auto consumer : model.consumers_of(producer)) {
        if (on_stage(consumer)) reach = std::max(reach, consumer);
      }
    }
    // No earlier output is read past i: i's output alone carries the stage on.
    const bool cut = reach <= i;
    for (auto consumer : model.consumers_of(i)) {
      if (on_stage(consumer)) reach = std::max(reach, consumer);
    }
    if (cut) close(i);
  }
  if (last) close(*last);
  return end_of;
}

}  // namespace tessera
