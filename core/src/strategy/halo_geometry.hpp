#pragma once
// What a spatially split window layer (convolution, pooling) exchanges and computes, from its
// shard: the axes it exchanges halos along, whether its interior can be computed during the
// first exchange, the share of its output near the boundary, and the bytes of one halo plane.
// The step program's writer (step_program.cpp) turns these into ops.
#include <cstddef>
#include <vector>

#include "tessera/core/common/dtype.hpp"
#include "tessera/core/common/tensor_shape.hpp"
#include "tessera/core/model/model_graph.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"

namespace tessera {

// The spatial axes layer i exchanges halos along: split, with a halo. Empty for a layer that is
// not split or has no window.
std::vector<int> exchanged_axes(const ModelGraph& model, const ShardPlan& plan, std::size_t i);

// Whether a convolution's interior can be computed during its first axis's exchange: every
// exchanged axis of the smallest shard holds enough planes (interior_overlaps_exchange).
// Pooling never overlaps: its partitioned kernel exchanges first.
bool interior_overlaps_halos(const ModelGraph& model, const ShardPlan& plan, std::size_t i,
                             const std::vector<int>& axes);

// The largest share of the shard's output, over the exchanged axes, that needs halo planes.
double boundary_fraction(const LayerShard& shard, const std::vector<int>& axes);

// How much larger the haloed input window is than the owned input, over the exchanged axes:
// what backward-data covers.
double haloed_window_factor(const LayerShard& shard, const std::vector<int>& axes);

// Bytes of one plane orthogonal to `axis` of a local tensor.
double plane_bytes(const TensorShape& local, int axis, DType dtype);

}  // namespace tessera
