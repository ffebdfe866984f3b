#pragma once
// Step inputs from the synthetic CosmoFlow data set (io/synthetic_dataset.hpp), generated in
// memory: each rank produces only its samples' planes, so a spatial split costs no more than its
// share. The data set has `dataset_samples` samples, visited in order and again every epoch.
#include <cstdint>
#include <vector>

#include "tessera/core/tensor_shape.hpp"
#include "tessera/kernels/real/trainer.hpp"

namespace tessera::kernels::real {

struct SyntheticInput {
  std::uint64_t seed = 0;
  std::int64_t dataset_samples = 64;
  TensorShape sample;  // the model's input, per sample: C x D x H x W
};

// Samples first_sample .. first_sample + samples - 1 (modulo the data set), planes
// [first, first + count) per spatial axis. Throws std::invalid_argument unless the sample is a
// 3D volume (the synthetic relation's layout).
StepInput synthetic_step_input(const SyntheticInput& source, std::int64_t first_sample,
                               std::int64_t samples, const std::vector<std::int64_t>& first,
                               const std::vector<std::int64_t>& count);

}  // namespace tessera::kernels::real
