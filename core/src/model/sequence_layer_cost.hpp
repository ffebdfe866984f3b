#pragma once
// Parameters, FLOPs and saved tensors of the layers recurrent models add (lstm, embedding,
// attention, projection), with the formulas in sequence_layer_cost.cpp.
#include <cstdint>
#include <vector>

#include "tessera/core/layer_cost.hpp"

namespace tessera {

std::int64_t sequence_layer_parameters(const Layer& layer, const std::vector<TensorShape>& inputs);

// Fills flops, weight_bytes_read and saved_for_backward_bytes of `cost` (whose parameters and
// weight_bytes are already set) for `batch` samples.
void add_sequence_layer_cost(const Layer& layer, const std::vector<TensorShape>& inputs,
                             std::int64_t batch, DType dtype, LayerCost& cost);

}  // namespace tessera
