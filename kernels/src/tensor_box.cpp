#include "tessera/kernels/tensor_box.hpp"

#include <algorithm>
#include <stdexcept>

#include "tessera/kernels/device.hpp"
#include "tessera/kernels/layer_kernels.hpp"

namespace tessera::kernels {

namespace {

// Row-major strides of the placement's dims, batch-channels first.
std::vector<std::int64_t> strides_of(const TensorPlacement& placement) {
  const int rank = placement.spatial.spatial_rank();
  std::vector<std::int64_t> strides(static_cast<std::size_t>(rank) + 1, 1);
  for (int dim = rank - 1; dim >= 0; --dim) {
    strides[dim] = strides[dim + 1] * placement.spatial.count[dim];
  }
  return strides;
}

// Calls run(from_offset, to_offset, floats) for every contiguous run of `box`, merging trailing
// dims that both tensors hold whole.
template <typename Run>
void for_each_run(const TensorPlacement& from, const TensorPlacement& to, const SpatialBox& box,
                  Run run) {
  if (from.batch_channels != to.batch_channels) {
    throw std::invalid_argument("box copy between tensors of different batch x channels");
  }
  if (!contains(from.spatial, box) || !contains(to.spatial, box)) {
    throw std::logic_error("box " + to_string(box) + " is not inside both " +
                           to_string(from.spatial) + " and " + to_string(to.spatial));
  }
  if (box.empty() || from.batch_channels == 0) return;
  const int rank = box.spatial_rank();
  // dims: 0 = batch x channels, 1.. = spatial axes
  std::vector<std::int64_t> size(static_cast<std::size_t>(rank) + 1), from_at(size.size()),
      to_at(size.size()), from_extent(size.size()), to_extent(size.size());
  size[0] = from.batch_channels;
  from_extent[0] = to_extent[0] = from.batch_channels;
  for (int axis = 0; axis < rank; ++axis) {
    size[axis + 1] = box.count[axis];
    from_at[axis + 1] = box.first[axis] - from.spatial.first[axis];
    to_at[axis + 1] = box.first[axis] - to.spatial.first[axis];
    from_extent[axis + 1] = from.spatial.count[axis];
    to_extent[axis + 1] = to.spatial.count[axis];
  }
  const auto from_strides = strides_of(from), to_strides = strides_of(to);
  int outer = rank;  // dims [outer, rank] form one contiguous run
  std::int64_t run_floats = size[rank];
  while (outer > 0 && size[outer] == from_extent[outer] && size[outer] == to_extent[outer]) {
    --outer;
    run_floats *= size[outer];
  }
  std::vector<std::int64_t> index(static_cast<std::size_t>(outer), 0);
  while (true) {
    std::int64_t from_offset = 0, to_offset = 0;
    for (int dim = 0; dim <= rank; ++dim) {
      const std::int64_t at = dim < outer ? index[dim] : 0;
      from_offset += (from_at[dim] + at) * from_strides[dim];
      to_offset += (to_at[dim] + at) * to_strides[dim];
    }
    run(from_offset, to_offset, run_floats);
    int dim = outer - 1;
    while (dim >= 0 && ++index[dim] == size[dim]) index[dim--] = 0;
    if (dim < 0) break;
  }
}

}  // namespace

void copy_box(Device& device, const float* from, const TensorPlacement& from_placement, float* to,
              const TensorPlacement& to_placement, const SpatialBox& box) {
  for_each_run(from_placement, to_placement, box,
               [&](std::int64_t from_offset, std::int64_t to_offset, std::int64_t floats) {
                 device.copy_on_device(from + from_offset, to + to_offset,
                                       static_cast<std::size_t>(floats));
               });
}

void accumulate_box(Device& device, const float* from, const TensorPlacement& from_placement,
                    float* to, const TensorPlacement& to_placement, const SpatialBox& box) {
  for_each_run(from_placement, to_placement, box,
               [&](std::int64_t from_offset, std::int64_t to_offset, std::int64_t floats) {
                 device.layers().axpy(floats, 1.0f, from + from_offset, to + to_offset);
               });
}

}  // namespace tessera::kernels
