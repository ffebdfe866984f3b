#pragma once
// What tensor parallelism may do with a layer of each kind (the kind's rules say, in
// layer_kind_rules.hpp), and what it does with one layer of a model (the plan of
// strategy/tensor_split.hpp): the t GPUs of a tensor group split the layer's weights, as
// Megatron-LM splits a transformer's linear layers and attention heads (Shoeybi et al. 2019) and
// LBANN's distconv a convolution's filters and channels (Dryden et al., SC19).
#include <cstdint>
#include <string>

namespace tessera {

enum class TensorRole {
  whole,           // runs on the whole input (layer and batch norms over C, recurrences, inputs)
  channel_wise,    // each output channel reads its own input channel: runs on the channels held
  matrix_product,  // split by its output channels (filters) or by its input channels
  heads,           // multi-head attention: split by heads
  table,           // an embedding: split by the table's rows (its vocabulary)
  class_loss,      // a loss over classes: split by class where its logits come split
};

enum class TensorSplit {
  replicated,  // the whole layer on every GPU of the group, on whole inputs (gathered if split)
  follows,     // channel-wise on split channels: each GPU its own channels
  column,      // output channels split (column-parallel linear, a convolution's filters): the
               // input whole, its gradient's partial sums all-reduced in backward
  row,         // input channels split (row-parallel linear, a convolution's channels): the
               // output's partial sums all-reduced in forward
  heads,       // the heads split: input whole, output all-reduced in forward, the input's
               // gradient in backward (a column then a row split inside one layer)
  vocabulary,  // an embedding's rows (the output's partial rows all-reduced in forward), or a
               // loss over logits split by class (its per-position sums all-reduced in forward)
};
std::string to_string(TensorSplit split);

}  // namespace tessera
