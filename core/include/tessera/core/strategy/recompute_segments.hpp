#pragma once
// Activation recomputation's segments (memory.recompute: full; Chen et al. 2016, "Training Deep
// Nets with Sublinear Memory Cost"; Megatron-LM checkpoints each transformer layer's input): a
// stage's layers, in order, split where one layer's output alone carries everything later layers
// of the stage read (no edge of the graph jumps over it: a residual block's sum, a chain's every
// layer). The outputs at those cuts are kept for backward; the layers between two cuts form a
// segment whose inner outputs and layer states are dropped after forward and recomputed, by
// running the segment's forward again, just before the backward of its last layer. A segment
// of one layer has nothing inside to drop and is not recomputed, so chains without branches keep
// everything: transformers and residual networks are what this serves.
#include <cstddef>
#include <optional>
#include <vector>

#include "tessera/core/model/model_graph.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"

namespace tessera {

// Per layer of the model: for a layer of `stage` inside a recomputed segment, the segment's last
// layer (the one before whose backward the segment's forward runs again); none otherwise.
std::vector<std::optional<std::size_t>> recomputed_segment_ends(const ModelGraph& model,
                                                                const ShardPlan& plan, int stage);

}  // namespace tessera
