#pragma once
// `tessera data generate`: the synthetic data set of a training task written as HDF5 files, one
// per sample, with the very relation synthetic_input.hpp generates in memory, so a model trains
// on the files exactly as on the in-memory data set of the same seed. Regression of four values
// writes CosmoFlow's layout (io/synthetic_dataset.hpp, plane by plane, any width); segmentation
// writes the 3D U-Net layout (a whole sample is generated in memory before it is written).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tessera/core/model/training_task.hpp"
#include "tessera/kernels/io/synthetic_dataset.hpp"

namespace tessera::kernels::real {

// The CosmoFlow layout for `task` regression (targets.values_per_sample must be 4), the
// segmentation layout with targets.classes classes for `task` segmentation. Throws
// tessera::InputError naming the option for a task without a file layout (classification) or a
// bad spec; std::runtime_error when writing fails.
std::vector<std::string> write_synthetic_dataset(
    const io::SyntheticDatasetSpec& spec, const TargetLayout& targets,
    const std::function<void(std::int64_t written, const std::string& path)>& progress = {});

}  // namespace tessera::kernels::real
