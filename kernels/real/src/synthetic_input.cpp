#include "tessera/kernels/real/synthetic_input.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "layer_executor.hpp"
#include "tessera/kernels/io/synthetic_dataset.hpp"

namespace tessera::kernels::real {
namespace {

constexpr std::int64_t kPatternCells = 4;  // per axis, for the classification pattern

double unit_uniform(std::uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;  // [0, 1)
}

// Calls visit(global flat index, cell index, local position) for every voxel of the box, in the
// box's row-major order; cells split each axis into kPatternCells.
template <typename Visit>
void for_each_voxel(const std::vector<std::int64_t>& extent, const std::vector<std::int64_t>& first,
                    const std::vector<std::int64_t>& count, Visit visit) {
  const std::size_t rank = extent.size();
  std::vector<std::int64_t> at(rank, 0);
  std::int64_t total = 1;
  for (auto c : count) total *= c;
  for (std::int64_t local = 0; local < total; ++local) {
    std::int64_t flat = 0, cell = 0;
    for (std::size_t a = 0; a < rank; ++a) {
      const std::int64_t coordinate = first[a] + at[a];
      flat = flat * extent[a] + coordinate;
      cell = cell * kPatternCells +
             std::min(kPatternCells - 1, coordinate * kPatternCells / extent[a]);
    }
    visit(flat, cell, local);
    for (std::size_t a = rank; a-- > 0;) {
      if (++at[a] < count[a]) break;
      at[a] = 0;
    }
  }
}

void cosmoflow_sample(const SyntheticInput& source, std::int64_t sample,
                      const std::vector<std::int64_t>& first,
                      const std::vector<std::int64_t>& count, StepInput& input) {
  const auto& spatial = source.sample.spatial;
  const io::VolumeShape shape{.channels = source.sample.c,
                              .spatial = {spatial[0], spatial[1], spatial[2]}};
  const auto plane = static_cast<std::size_t>(spatial[1] * spatial[2]);
  std::vector<float> slab(static_cast<std::size_t>(count[0]) * plane);
  const auto targets = io::synthetic_targets(source.seed, sample);
  input.targets.insert(input.targets.end(), targets.begin(), targets.end());
  for (std::int64_t c = 0; c < source.sample.c; ++c) {
    io::fill_synthetic_planes(source.seed, sample, shape, targets, c, first[0], first[0] + count[0],
                              slab);
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

// A sequence model's sample (token ids, TargetLayout::token_vocabulary): channel 0 is a random
// token sequence; the label of step t is (token[t] + token[t - 1]) mod classes (token[-1] = 0),
// learnable by a recurrent layer reading channel 0 (directly or through attention); the other
// channels are the labels one step late (a translation's target tokens under teacher forcing,
// the decoder's input). The box holds steps [first, first + count).
void token_sample(const SyntheticInput& source, std::int64_t sample,
                  const std::vector<std::int64_t>& first, const std::vector<std::int64_t>& count,
                  StepInput& input) {
  const auto& layout = source.targets;
  const auto key = mix_seed(mix_seed(source.seed, static_cast<std::uint64_t>(sample)), 0x70CE);
  const auto vocabulary = static_cast<std::uint64_t>(layout.token_vocabulary);
  const auto token = [&](std::int64_t t) -> std::int64_t {
    return t < 0 ? 0
                 : static_cast<std::int64_t>(mix_seed(key, static_cast<std::uint64_t>(t)) %
                                             vocabulary);
  };
  const auto label = [&](std::int64_t t) -> std::int64_t {
    return t < 0 ? 0 : (token(t) + token(t - 1)) % layout.classes;
  };
  for (std::int64_t c = 0; c < source.sample.c; ++c) {
    for (std::int64_t t = first[0]; t < first[0] + count[0]; ++t) {
      const std::int64_t value = c == 0 ? token(t) : label(t - 1) % layout.token_vocabulary;
      input.volume.push_back(static_cast<float>(value));
    }
  }
  if (layout.task == TrainingTask::segmentation) {
    for (std::int64_t t = first[0]; t < first[0] + count[0]; ++t)
      input.targets.push_back(static_cast<float>(label(t)));
  } else {
    // Any other loss over a token model: the generic targets (a class per sample, or zeros).
    const std::int64_t values =
        layout.task == TrainingTask::classification ? 1 : layout.values_per_sample;
    for (std::int64_t v = 0; v < values; ++v)
      input.targets.push_back(static_cast<float>(
          layout.task == TrainingTask::classification ? token(v) % layout.classes : 0));
  }
}

// Every other task: noise (or uniform values) per voxel from (seed, sample, channel, voxel), plus
// the classification pattern, and the labels of segmentation.
void generic_sample(const SyntheticInput& source, std::int64_t sample,
                    const std::vector<std::int64_t>& first, const std::vector<std::int64_t>& count,
                    StepInput& input) {
  const auto& layout = source.targets;
  const auto sample_key = mix_seed(source.seed, static_cast<std::uint64_t>(sample));
  const std::int64_t label =
      layout.task == TrainingTask::classification
          ? static_cast<std::int64_t>(mix_seed(sample_key, 0xC1A55) %
                                      static_cast<std::uint64_t>(layout.classes))
          : 0;
  const bool segmentation = layout.task == TrainingTask::segmentation;
  const std::size_t volume_start = input.volume.size();
  std::int64_t voxels = 1;
  for (auto c : count) voxels *= c;
  for (std::int64_t c = 0; c < source.sample.c; ++c) {
    const auto channel_key = mix_seed(sample_key, static_cast<std::uint64_t>(c) + 1);
    const auto pattern_key = mix_seed(mix_seed(source.seed, static_cast<std::uint64_t>(label) + 7),
                                      static_cast<std::uint64_t>(c));
    for_each_voxel(source.sample.spatial, first, count,
                   [&](std::int64_t flat, std::int64_t cell, std::int64_t) {
                     const double u =
                         unit_uniform(mix_seed(channel_key, static_cast<std::uint64_t>(flat)));
                     double value = segmentation ? 2 * u - 1 : std::sqrt(12.0) * (u - 0.5);
                     if (layout.task == TrainingTask::classification) {
                       const bool up = mix_seed(pattern_key, static_cast<std::uint64_t>(cell)) & 1;
                       value += up ? 1.0 : -1.0;
                     }
                     input.volume.push_back(static_cast<float>(value));
                   });
  }
  switch (layout.task) {
    case TrainingTask::regression:
      input.targets.insert(input.targets.end(), static_cast<std::size_t>(layout.values_per_sample),
                           0.0F);
      break;
    case TrainingTask::classification:
      input.targets.push_back(static_cast<float>(label));
      break;
    case TrainingTask::segmentation:
      // Channel 0's values of the box come first in the volume just written.
      for (std::int64_t v = 0; v < voxels; ++v) {
        const double value = input.volume[volume_start + static_cast<std::size_t>(v)];
        const auto interval = static_cast<std::int64_t>(
            std::floor((value + 1) / 2 * static_cast<double>(layout.classes)));
        input.targets.push_back(
            static_cast<float>(std::clamp<std::int64_t>(interval, 0, layout.classes - 1)));
      }
      break;
  }
}

}  // namespace

StepInput synthetic_step_input(const SyntheticInput& source, std::int64_t first_sample,
                               std::int64_t samples, const std::vector<std::int64_t>& first,
                               const std::vector<std::int64_t>& count) {
  const auto& spatial = source.sample.spatial;
  if (first.size() != spatial.size() || count.size() != spatial.size()) {
    throw std::invalid_argument("the box has " + std::to_string(first.size()) +
                                " axes; the model's input " + to_string(source.sample) + " has " +
                                std::to_string(spatial.size()));
  }
  const bool cosmoflow = source.targets.task == TrainingTask::regression &&
                         source.targets.values_per_sample == 4 && spatial.size() == 3;
  StepInput input;
  for (std::int64_t s = 0; s < samples; ++s) {
    const std::int64_t sample = (first_sample + s) % source.dataset_samples;
    if (source.targets.token_vocabulary > 0 && spatial.size() == 1) {
      token_sample(source, sample, first, count, input);
    } else if (cosmoflow) {
      cosmoflow_sample(source, sample, first, count, input);
    } else {
      generic_sample(source, sample, first, count, input);
    }
  }
  return input;
}

}  // namespace tessera::kernels::real
