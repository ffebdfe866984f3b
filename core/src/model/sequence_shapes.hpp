#pragma once
// Output shapes of the layers recurrent models add (lstm, embedding, attention, projection).
// A sequence is N x C x T: one spatial axis, time.
#include <vector>

#include "tessera/core/layer.hpp"
#include "tessera/core/tensor_shape.hpp"

namespace tessera {

// Throws ModelError naming the layer when its inputs are not sequences of the shape it needs.
TensorShape infer_sequence_layer(const Layer& layer, const std::vector<TensorShape>& inputs);

// The weight matrix whose size bounds the layer's parameters (rows, columns), for the size check
// of shape inference; empty for kinds without weights.
std::vector<std::int64_t> sequence_weight_extents(const Layer& layer,
                                                  const std::vector<TensorShape>& inputs);

}  // namespace tessera
