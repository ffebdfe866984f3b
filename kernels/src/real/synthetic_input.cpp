#include "tessera/kernels/real/synthetic_input.hpp"

#include <stdexcept>

#include "tessera/kernels/io/synthetic_dataset.hpp"

namespace tessera::kernels::real {

StepInput synthetic_step_input(const SyntheticInput& source, std::int64_t first_sample,
                               std::int64_t samples, const std::vector<std::int64_t>& first,
                               const std::vector<std::int64_t>& count) {
  const auto& spatial = source.sample.spatial;
  if (spatial.size() != 3 || first.size() != 3 || count.size() != 3) {
    throw std::invalid_argument("the synthetic data set holds 3D volumes; the model's input is " +
                                to_string(source.sample));
  }
  const io::VolumeShape shape{.channels = source.sample.c,
                              .spatial = {spatial[0], spatial[1], spatial[2]}};
  const auto plane = static_cast<std::size_t>(spatial[1] * spatial[2]);
  const auto box_plane = static_cast<std::size_t>(count[1] * count[2]);
  StepInput input;
  input.volume.reserve(static_cast<std::size_t>(samples * source.sample.c * count[0]) * box_plane);
  std::vector<float> slab(static_cast<std::size_t>(count[0]) * plane);
  for (std::int64_t s = 0; s < samples; ++s) {
    const std::int64_t sample = (first_sample + s) % source.dataset_samples;
    const auto targets = io::synthetic_targets(source.seed, sample);
    input.targets.insert(input.targets.end(), targets.begin(), targets.end());
    for (std::int64_t c = 0; c < source.sample.c; ++c) {
      io::fill_synthetic_planes(source.seed, sample, shape, targets, c, first[0],
                                first[0] + count[0], slab);
      // Keep the box's rows of each depth plane (all of them when H and W are unsplit).
      for (std::int64_t d = 0; d < count[0]; ++d) {
        for (std::int64_t h = 0; h < count[1]; ++h) {
          const auto row =
              slab.begin() + static_cast<std::ptrdiff_t>(
                                 static_cast<std::size_t>(d) * plane +
                                 static_cast<std::size_t>((first[1] + h) * spatial[2] + first[2]));
          input.volume.insert(input.volume.end(), row, row + count[2]);
        }
      }
    }
  }
  return input;
}

}  // namespace tessera::kernels::real
