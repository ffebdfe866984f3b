#pragma once
// The convolution problems one shard of a spatially split convolution runs, as the partitioned
// kernels run them (kernels/partitioned_convolution.hpp). The volume's boundary padding sits as
// zeros in the shard's buffer, so each window is an unpadded convolution over the planes it
// reads: forward computes its interior and boundary boxes apart where the program overlaps the
// halos with the interior, the whole shard otherwise; backward-data and backward-filter run on
// the whole haloed window. `tessera profile` measures these problems, the step program plans and
// times them (window_kernel_plan.hpp), the real backend runs them.
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/model/layer.hpp"
#include "tessera/core/model/model_graph.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"
#include "tessera/core/strategy/step_part.hpp"

namespace tessera {

struct WindowKernel {
  Layer layer;         // the layer, unpadded
  TensorShape input;   // per sample (n = 1): the planes the window reads
  TensorShape output;  // per sample: the outputs it computes
  std::string shape;   // kernel_shape_key(layer, {input}, output)
  bool operator==(const WindowKernel& other) const { return shape == other.shape; }
};

// Whether a layer's shard runs as window kernels: a (not transposed) convolution split over the
// spatial grid. A split transposed convolution runs its shard's own planes (no halo).
bool runs_window_kernels(const Layer& layer, bool spatially_split);

// The windows each shard of `grid` (numbered row-major, as ranks of a spatial group are)
// computes for `part` of `direction`, by shard: forward interior (none where the shard has no
// interior) or boundary (one box per side and axis that waits for a halo), else the whole shard.
// Throws std::invalid_argument where the grid does not fit the layer.
std::vector<std::vector<WindowKernel>> window_kernels_by_shard(
    const ResolvedLayer& layer, const std::vector<std::int64_t>& grid, Direction direction,
    StepPart part);

// The shard whose windows the step program times: the middle one of each axis, which has
// neighbours on both sides where the axis is split three ways or more.
std::int64_t timed_shard(const std::vector<std::int64_t>& grid);

}  // namespace tessera
