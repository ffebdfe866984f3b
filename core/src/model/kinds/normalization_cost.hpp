#pragma once
// The FLOPs of a normalisation, batch or layer norm: the same operations per element, the
// statistics taken over the batch or over the channels.
#include "tessera/core/model/layer_kind_rules.hpp"

namespace tessera::kinds {

// Operations per element (documented counts, not measurements; the layers are memory-bound):
// forward sum, square-sum, normalise, scale, shift (5); backward two reductions and the input
// gradient (8); the scale and shift gradients (2, with `affine`).
void add_normalization_cost(const LayerCostQuery& query, bool affine, LayerCost& cost);

}  // namespace tessera::kinds
