#pragma once
// What of tensor parallelism (tensor_split.hpp) the real backend runs, on CPU ranks: Megatron-LM's
// splits of a transformer (projections by column and row, attention by heads, the embedding and
// the loss by vocabulary), a CNN's filter and channel splits (convolutions and fully connected
// layers by column and row), activations, sums, pooling and batch-norm on the channels held, and
// the all-gather of a split input a layer needs whole. A point asking for more is skipped with
// the reason this gives.
#include <optional>
#include <string>

#include "tessera/core/model/model_graph.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"

namespace tessera::kernels::real {

// Why the ranks cannot run `plan`'s tensor splits of `model` (none when they can, or when the
// plan splits nothing); `on_gpu`: the ranks run on GPUs.
std::optional<std::string> unsupported_tensor_split(const ModelGraph& model, const ShardPlan& plan,
                                                    bool on_gpu);

}  // namespace tessera::kernels::real
