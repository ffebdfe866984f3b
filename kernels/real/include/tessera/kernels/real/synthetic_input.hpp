#pragma once
// Step inputs from a synthetic data set generated in memory, with a relation the model can learn
// for its task (training_task.hpp), deterministic in (seed, sample) and the same whichever rank
// makes which part: each rank produces only its samples' planes of the input (and, to label
// voxels, of the labels), so a spatial split costs no more than its share. The data set has
// `dataset_samples` samples, visited in order and again every epoch.
//
// The relations:
//  - regression of four values from a 3D volume: CosmoFlow's (io/synthetic_dataset.hpp: the
//    values are fixed linear functions of the volume); regression of other values: the volume is
//    noise and the targets are zero (the DeepBench layers, which study kernels, not learning);
//  - classification: sample i's label is drawn from (seed, i); its input is unit noise plus a
//    pattern of the label, +1 or -1 per channel and per cell of a 4-cell-per-axis grid;
//  - segmentation: the input is uniform on [-1, 1); each voxel's label is the interval of
//    channel 0's value at that voxel among `classes` equal intervals of [-1, 1).
#include <cstdint>
#include <vector>

#include "tessera/core/common/tensor_shape.hpp"
#include "tessera/core/model/training_task.hpp"
#include "tessera/kernels/real/step_input.hpp"

namespace tessera::kernels::real {

struct SyntheticInput {
  std::uint64_t seed = 0;
  std::int64_t dataset_samples = 64;
  TensorShape sample;  // the model's input, per sample: C x spatial
  TargetLayout targets{.task = TrainingTask::regression, .values_per_sample = 4};
};

// Samples first_sample .. first_sample + samples - 1 (modulo the data set), input planes
// [first, first + count) per spatial axis; targets per sample (regression values, a class
// label, or the labels of the same voxels) as floats.
StepInput synthetic_step_input(const SyntheticInput& source, std::int64_t first_sample,
                               std::int64_t samples, const std::vector<std::int64_t>& first,
                               const std::vector<std::int64_t>& count);

}  // namespace tessera::kernels::real
