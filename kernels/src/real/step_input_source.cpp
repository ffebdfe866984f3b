#include "tessera/kernels/real/step_input_source.hpp"

#include <chrono>

#include "tessera/core/input_error.hpp"
#include "tessera/kernels/io/dataset_index.hpp"
#include "tessera/kernels/io/sample_prefetcher.hpp"

namespace tessera::kernels::real {
namespace {

std::int64_t first_sample_of(const InputPlacement& placement, std::int64_t step) {
  return step * placement.global_batch + placement.replica * placement.mini_batch;
}

class SyntheticSource : public StepInputSource {
 public:
  SyntheticSource(const SyntheticInput& source, const InputPlacement& placement)
      : source_(source), placement_(placement) {}
  StepInput next(double& io_seconds) override {
    const auto begin = std::chrono::steady_clock::now();
    auto input = synthetic_step_input(source_, first_sample_of(placement_, step_++),
                                      placement_.mini_batch, placement_.first, placement_.count);
    io_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    return input;
  }
  std::string description() const override {
    return "synthetic data set in memory (" + std::to_string(source_.dataset_samples) +
           " samples, seed " + std::to_string(source_.seed) + ")";
  }

 private:
  SyntheticInput source_;
  InputPlacement placement_;
  std::int64_t step_ = 0;
};

class Hdf5Source : public StepInputSource {
 public:
  Hdf5Source(const std::string& directory, const TensorShape& sample,
             const InputPlacement& placement, std::int64_t steps)
      : directory_(directory), placement_(placement) {
    const auto index = io::index_dataset(directory);
    const auto& shape = index.shape;
    if (sample.spatial.size() != 3 || shape.channels != sample.c ||
        shape.spatial[0] != sample.spatial[0] || shape.spatial[1] != sample.spatial[1] ||
        shape.spatial[2] != sample.spatial[2]) {
      throw InputError(
          {directory, 0, 0}, "io.dataset",
          "expected samples of " + to_string(sample) + " (the model's input), got samples of " +
              std::to_string(shape.channels) + "x" + std::to_string(shape.spatial[0]) + "x" +
              std::to_string(shape.spatial[1]) + "x" + std::to_string(shape.spatial[2]));
    }
    const auto paths = index.paths();
    std::vector<std::string> order;
    for (std::int64_t step = 0; step < steps; ++step) {
      for (std::int64_t s = 0; s < placement.mini_batch; ++s) {
        const auto sample_index =
            (first_sample_of(placement, step) + s) % static_cast<std::int64_t>(paths.size());
        order.push_back(paths[static_cast<std::size_t>(sample_index)]);
      }
    }
    io::VolumeBox box;
    for (int axis = 0; axis < 3; ++axis) {
      box.begin[axis] = placement.first[static_cast<std::size_t>(axis)];
      box.end[axis] = box.begin[axis] + placement.count[static_cast<std::size_t>(axis)];
    }
    prefetcher_ = std::make_unique<io::SamplePrefetcher>(std::move(order), box);
  }
  StepInput next(double& io_seconds) override {
    StepInput input;
    io_seconds = 0;
    for (std::int64_t s = 0; s < placement_.mini_batch; ++s) {
      const auto* sample = prefetcher_->next();
      if (sample == nullptr) throw std::runtime_error("the prefetcher ran out of samples");
      io_seconds += sample->stall_seconds;
      input.volume.insert(input.volume.end(), sample->volume.begin(), sample->volume.end());
      input.targets.insert(input.targets.end(), sample->targets.begin(), sample->targets.end());
    }
    return input;
  }
  std::string description() const override {
    const auto statistics = prefetcher_->statistics();
    return "HDF5 data set " + directory_ + ", sub-volume reads prefetched, " +
           std::to_string(statistics.read_bytes_per_second() / 1e6) + " MB/s read";
  }

 private:
  std::string directory_;
  InputPlacement placement_;
  std::unique_ptr<io::SamplePrefetcher> prefetcher_;
};

}  // namespace

std::unique_ptr<StepInputSource> synthetic_input_source(const SyntheticInput& source,
                                                        const InputPlacement& placement) {
  return std::make_unique<SyntheticSource>(source, placement);
}

std::unique_ptr<StepInputSource> hdf5_input_source(const std::string& directory,
                                                   const TensorShape& sample,
                                                   const InputPlacement& placement,
                                                   std::int64_t steps) {
  return std::make_unique<Hdf5Source>(directory, sample, placement, steps);
}

}  // namespace tessera::kernels::real
