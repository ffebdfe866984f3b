#include "tessera/core/loading/sweep.hpp"

#include "tessera/core/common/input_error.hpp"

namespace tessera {
namespace {

std::size_t grown_axis(GrowAxis grow, std::size_t rank) {
  // spatial_d/h/w name axes of a 3D model; a 2D model has only H and W.
  const std::size_t from_end = grow == GrowAxis::spatial_d   ? 3
                               : grow == GrowAxis::spatial_h ? 2
                                                             : 1;
  return rank >= from_end ? rank - from_end : SIZE_MAX;
}

}  // namespace

std::vector<ParallelConfig> expand_sweep(const SweepSection& sweep, const ParallelConfig& base,
                                         const std::string& file) {
  std::vector<ParallelConfig> points;
  const std::int64_t global_batch = base.global_batch();
  for (std::size_t i = 0; i < sweep.gpus.size(); ++i) {
    const std::int64_t gpus = sweep.gpus[i];
    const std::string key = "sweep.gpus[" + std::to_string(i) + "]";
    auto fail = [&](const std::string& problem) -> void {
      throw InputError(i < sweep.gpus_where.size() ? sweep.gpus_where[i] : SourceLocation{file},
                       key, problem);
    };
    ParallelConfig point = base;
    if (sweep.grow == GrowAxis::data) {
      const std::int64_t per_replica = base.gpus_per_replica();
      if (gpus % per_replica != 0) {
        fail("expected a multiple of " + std::to_string(per_replica) + " GPUs (spatial grid " +
             grid_to_string(base.spatial_grid) + " x model degree " +
             std::to_string(base.model_degree) + " x tensor degree " + std::to_string(base.tensor) +
             " per replica), got " + std::to_string(gpus));
      }
      point.data = gpus / per_replica;
      if (sweep.scaling == Scaling::strong) {
        if (global_batch % point.data != 0) {
          fail("strong scaling keeps the global mini-batch of " + std::to_string(global_batch) +
               " samples, which " + std::to_string(point.data) +
               " data-parallel replicas cannot share evenly");
        }
        point.mini_batch = global_batch / point.data;
      }
    } else {
      const std::size_t axis = grown_axis(sweep.grow, point.spatial_grid.size());
      if (axis == SIZE_MAX) {
        fail("grow: " + to_string(sweep.grow) + " names an axis the model does not have");
      }
      const std::int64_t others = base.gpus() / base.spatial_grid[axis];
      if (gpus % others != 0) {
        fail("expected a multiple of " + std::to_string(others) +
             " GPUs (data x model x tensor x the other spatial axes), got " + std::to_string(gpus));
      }
      point.spatial_grid[axis] = gpus / others;
    }
    points.push_back(point);
  }
  return points;
}

}  // namespace tessera
