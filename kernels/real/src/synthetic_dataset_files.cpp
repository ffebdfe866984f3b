#include "tessera/kernels/real/synthetic_dataset_files.hpp"

#include <filesystem>

#include "tessera/core/common/input_error.hpp"
#include "tessera/kernels/io/sample_writer.hpp"
#include "tessera/kernels/io/synthetic_dataset.hpp"
#include "tessera/kernels/real/synthetic_input.hpp"

namespace tessera::kernels::real {

std::vector<std::string> write_synthetic_dataset(
    const io::SyntheticDatasetSpec& spec, const TargetLayout& targets,
    const std::function<void(std::int64_t, const std::string&)>& progress) {
  const SourceLocation where{.file = spec.directory};
  if (targets.task == TrainingTask::regression) {
    if (targets.values_per_sample != io::kTargetCount) {
      throw InputError(where, "--task", "regression files hold CosmoFlow's four targets");
    }
    return io::generate_synthetic_dataset(spec, progress);
  }
  if (targets.task != TrainingTask::segmentation) {
    throw InputError(where, "--task",
                     "expected regression or segmentation (classification has no file layout)");
  }
  if (targets.classes < 2) {
    throw InputError(where, "--classes",
                     "expected at least 2 classes, got " + std::to_string(targets.classes));
  }
  io::prepare_synthetic_dataset(spec);
  const std::vector<std::int64_t> spatial{spec.width, spec.width, spec.width};
  const SyntheticInput source{.seed = spec.seed,
                              .dataset_samples = spec.samples,
                              .sample = {.n = 1, .c = spec.channels, .spatial = spatial},
                              .targets = {.task = TrainingTask::segmentation,
                                          .values_per_sample = spec.width * spec.width * spec.width,
                                          .classes = targets.classes}};
  const io::VolumeShape shape{.channels = spec.channels,
                              .spatial = {spec.width, spec.width, spec.width}};
  std::vector<std::string> paths;
  for (std::int64_t sample = 0; sample < spec.samples; ++sample) {
    const auto input = synthetic_step_input(source, sample, 1, {0, 0, 0}, spatial);
    std::vector<std::int32_t> labels(input.targets.begin(), input.targets.end());
    paths.push_back(
        (std::filesystem::path(spec.directory) / io::synthetic_sample_file_name(sample)).string());
    io::write_segmentation_file(paths.back(), shape, input.volume, labels, spec.layout);
    if (progress) progress(sample + 1, paths.back());
  }
  return paths;
}

}  // namespace tessera::kernels::real
