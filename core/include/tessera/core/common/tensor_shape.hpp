#pragma once
// Shape of an activation tensor: N, C and 0..3 spatial extents ordered as (D,) H, W.
// A fully connected output has no spatial extents.
#include <cstdint>
#include <string>
#include <vector>

namespace tessera {

struct TensorShape {
  std::int64_t n = 1;
  std::int64_t c = 1;
  std::vector<std::int64_t> spatial;  // (D,) H, W

  int spatial_rank() const { return static_cast<int>(spatial.size()); }
  std::int64_t spatial_elements() const;
  std::int64_t elements_per_sample() const { return c * spatial_elements(); }
  std::int64_t elements() const { return n * elements_per_sample(); }
  TensorShape with_batch(std::int64_t batch) const;

  bool operator==(const TensorShape&) const = default;
};

// "16x128x128x128" (per sample: C x spatial) or with batch "Nx16x...".
std::string to_string(const TensorShape& shape, bool with_batch = false);

// Names of the spatial axes for a given rank: {"D","H","W"}, {"H","W"}, {"W"}.
std::vector<std::string> spatial_axis_names(int rank);

}  // namespace tessera
