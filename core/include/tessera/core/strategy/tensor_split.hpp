#pragma once
// Tensor parallelism's plan of a model: how the `parts` GPUs of a tensor group split each layer
// (tensor_role.hpp), decided once in the model's order from what each kind allows and whether
// its inputs arrive split by channels:
//  - a matrix product on a whole input splits its output channels (column), on split channels
//    its input channels (row), so that Megatron's pairs form by themselves: a transformer MLP is
//    column then row, one all-reduce in forward and one in backward; convolutions alternate
//    filter and channel splits (Dryden et al., SC19) with the partial-sum all-reduces they need;
//  - channel-wise layers (activations, dropout, pooling, batch norm, merges) run on the channels
//    held; attention splits its heads; an embedding its rows; a softmax loss its classes;
//  - layers that need whole channels (layer norm, recurrences) all-gather a split input first and
//    run whole on every GPU of the group, as Megatron replicates its layer norms.
// The step program (step_program.hpp) turns the plan into tensor-group collectives, the shard plan
// (parallel_strategy.hpp) into each layer's local shapes and weights.
#include <cstdint>
#include <vector>

#include "tessera/core/model/model_graph.hpp"
#include "tessera/core/model/tensor_role.hpp"

namespace tessera {

struct LayerTensorSplit {
  TensorSplit split = TensorSplit::replicated;
  bool output_split = false;  // its output's channels are split over the group
  // Per input: all-gathered before forward (it came split; the layer needs it whole). Backward
  // then keeps each GPU's share of the gradient: no message.
  std::vector<bool> gathered_inputs;
  // Whole layer run on the group's GPUs: each GPU holds this one (output channels, heads or rows
  // divided).
  Layer local_layer;
  // Of a vocabulary split (an embedding's rows, a loss's classes): the whole vocabulary. The
  // GPUs' equal shares may pass it; the last GPUs' rows past it are padding, as Megatron-LM pads
  // the vocabulary to a multiple of the degree.
  std::int64_t whole_vocabulary = 0;

  // The forward all-reduce of its output's partial sums (row, heads, an embedding's rows).
  bool reduces_output() const;
  // The backward all-reduce of its input gradient's partial sums (column, heads).
  bool reduces_input_gradient() const;
  // The forward all-reduce of a loss's per-position sums over classes split by class.
  bool reduces_class_sums() const;
};

// One entry per layer of `model`. With parts == 1 every layer is replicated and unchanged.
// Throws StrategyError (parallel_strategy.hpp), key parallelism.tensor, where `parts` does not
// divide what a layer splits (output channels, heads), naming the layer.
std::vector<LayerTensorSplit> plan_tensor_splits(const ModelGraph& model, std::int64_t parts);

// The model one GPU of the tensor group runs: every layer its local_layer, shapes inferred again
// (split channels, heads, rows and classes; a gathered input whole). Throws ModelError where a
// split leaves layers that do not fit together (a table's rows split unevenly under a head tied
// to it).
ModelGraph tensor_local_model(const ModelGraph& model, const std::vector<LayerTensorSplit>& splits);

}  // namespace tessera
