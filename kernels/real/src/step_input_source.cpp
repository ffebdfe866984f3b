#include "tessera/kernels/real/step_input_source.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <sstream>
#include <string>

#include "tessera/core/common/input_error.hpp"
#include "tessera/kernels/io/dataset_index.hpp"
#include "tessera/kernels/io/sample_prefetcher.hpp"

namespace tessera::kernels::real {
namespace {

// A sample's value as a user would write it: 7, 0.25, nan, inf.
std::string shortest(float value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

std::int64_t first_sample_of(const InputPlacement& placement, std::int64_t step) {
  return step * placement.global_batch + placement.samples_before;
}

class SyntheticSource : public StepInputSource {
 public:
  SyntheticSource(const SyntheticInput& source, const InputPlacement& placement)
      : source_(source), placement_(placement) {}
  // Synthetic samples stand for data already on the device: making them up is not the step's
  // I/O (the step program reads nothing for them).
  StepInput next(double& io_seconds) override {
    io_seconds = 0;
    return synthetic_step_input(source_, first_sample_of(placement_, step_++),
                                placement_.mini_batch, placement_.first, placement_.count);
  }
  InputSource last_source() const override { return InputSource::none; }
  std::string description() const override {
    return "synthetic data set in memory (" + std::to_string(source_.dataset_samples) +
           " samples, seed " + std::to_string(source_.seed) + ")";
  }

 private:
  SyntheticInput source_;
  InputPlacement placement_;
  std::int64_t step_ = 0;
};

// The rank's box of a whole sample's volume (C x D x H x W), as a sub-volume read gives it.
std::vector<float> crop(std::span<const float> whole, const io::VolumeShape& shape,
                        const io::VolumeBox& box) {
  std::vector<float> shard;
  const auto [d0, h0, w0] = box.begin;
  const auto [d1, h1, w1] = box.end;
  shard.reserve(static_cast<std::size_t>(shape.channels * (d1 - d0) * (h1 - h0) * (w1 - w0)));
  const auto [depth, height, width] = shape.spatial;
  for (std::int64_t c = 0; c < shape.channels; ++c) {
    for (std::int64_t d = d0; d < d1; ++d) {
      for (std::int64_t h = h0; h < h1; ++h) {
        const auto row = whole.begin() + ((c * depth + d) * height + h) * width;
        shard.insert(shard.end(), row + w0, row + w1);
      }
    }
  }
  return shard;
}

}  // namespace

io::DatasetIndex checked_hdf5_dataset(const IoSection& io, const TensorShape& sample,
                                      const TargetLayout& targets) {
  auto index = io::index_dataset(io.dataset);
  if (sample.spatial.size() != 3 || index.shape.channels != sample.c ||
      index.shape.spatial[0] != sample.spatial[0] || index.shape.spatial[1] != sample.spatial[1] ||
      index.shape.spatial[2] != sample.spatial[2]) {
    throw InputError(
        {io.dataset, 0, 0}, "io.dataset",
        "expected samples of " + to_string(sample) + " (the model's input), got samples of " +
            std::to_string(index.shape.channels) + "x" + std::to_string(index.shape.spatial[0]) +
            "x" + std::to_string(index.shape.spatial[1]) + "x" +
            std::to_string(index.shape.spatial[2]));
  }
  if (index.volume_dtype != io.stored_dtype) {
    throw InputError({io.dataset, 0, 0}, "io.stored_dtype",
                     "the data set's volumes hold " + to_string(index.volume_dtype) + " values (" +
                         index.samples.front().path + "), the scenario says " +
                         to_string(io.stored_dtype) +
                         "; the simulator's reads move what io.stored_dtype says");
  }
  const bool fits = targets.task == TrainingTask::segmentation
                        ? index.layout == io::SampleLayout::segmentation
                        : index.layout == io::SampleLayout::cosmoflow &&
                              targets.task == TrainingTask::regression &&
                              targets.values_per_sample == io::kTargetCount;
  if (!fits) {
    throw InputError({io.dataset, 0, 0}, "io.dataset",
                     "the model learns " + to_string(targets.task) +
                         ", which the data set's samples in the " + to_string(index.layout) +
                         " layout do not give (tessera data generate --task makes one)");
  }
  return index;
}

namespace {

class Hdf5Source : public StepInputSource {
 public:
  Hdf5Source(const io::DatasetIndex& index, const IoSection& io, const TargetLayout& targets,
             const InputPlacement& placement, std::int64_t steps, InputSource later_epochs,
             bool staged)
      : directory_(io.dataset),
        placement_(placement),
        io_(io),
        classes_(targets.classes),
        later_epochs_(later_epochs),
        staged_(staged && keeps_samples()) {
    shape_ = index.shape;
    layout_ = index.layout;
    const auto paths = index.paths();
    std::vector<std::string> reads;
    for (std::int64_t step = 0; step < steps; ++step) {
      for (std::int64_t s = 0; s < placement.mini_batch; ++s) {
        const auto sample_index =
            (first_sample_of(placement, step) + s) % static_cast<std::int64_t>(paths.size());
        const auto& path = paths[static_cast<std::size_t>(sample_index)];
        order_.push_back(path);
        // With a store, a sample's file is read once: later epochs find it in the store.
        if (!keeps_samples() || std::find(reads.begin(), reads.end(), path) == reads.end()) {
          reads.push_back(path);
        }
      }
    }
    // Staged, every file the run's steps take is read before the first step.
    if (staged_) staging_paths_ = reads;
    for (int axis = 0; axis < 3; ++axis) {
      box_.begin[axis] = placement.first[static_cast<std::size_t>(axis)];
      box_.end[axis] = box_.begin[axis] + placement.count[static_cast<std::size_t>(axis)];
    }
    io::VolumeBox read_box = box_;
    if (!io.read_sub_volume) {
      read_box.begin = {0, 0, 0};
      read_box.end = shape_.spatial;
    }
    prefetcher_ = std::make_unique<io::SamplePrefetcher>(std::move(reads), read_box,
                                                         io::SpatialHalo{}, io.prefetch);
  }

  StepInput next(double& io_seconds) override {
    StepInput input;
    io_seconds = 0;
    last_source_ = InputSource::none;
    for (std::int64_t s = 0; s < placement_.mini_batch; ++s) {
      const auto& path = order_.at(static_cast<std::size_t>(position_++));
      const Shard* shard = nullptr;
      if (auto kept = store_.find(path); kept != store_.end()) {
        shard = &kept->second;
        if (last_source_ == InputSource::none) last_source_ = store_source();
      } else {
        const bool again = !read_before_.insert(path).second;
        last_source_ = again && later_epochs_ == InputSource::page_cache ? InputSource::page_cache
                                                                         : InputSource::file_system;
        shard = &read_next(path, io_seconds);
      }
      input.volume.insert(input.volume.end(), shard->volume.begin(), shard->volume.end());
      input.targets.insert(input.targets.end(), shard->targets.begin(), shard->targets.end());
    }
    return input;
  }

  InputSource last_source() const override { return last_source_; }
  const InputError* input_problem() const override { return problem_ ? &*problem_ : nullptr; }

  double stage() override {
    if (!staged_) return 0;
    const auto start = std::chrono::steady_clock::now();
    double stalled = 0;
    for (const auto& path : staging_paths_) read_next(path, stalled);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  std::string description() const override {
    const auto statistics = prefetcher_->statistics();
    char rate[64];
    std::snprintf(rate, sizeof rate, "%.4g MB/s", statistics.read_bytes_per_second() / 1e6);
    return "HDF5 data set " + directory_ + ", " +
           (io_.read_sub_volume ? "sub-volume reads" : "whole-sample reads cut to the shard") +
           (io_.prefetch ? " prefetched" : " when asked (no prefetch)") + ", " + rate +
           (staged_
                ? ", the rank's share of the data set (" + std::to_string(staging_paths_.size()) +
                      " samples) staged into host memory before the first step (store: " +
                      to_string(io_.store) + ")"
            : keeps_samples() ? ", samples kept in host memory after the first epoch (store: " +
                                    to_string(io_.store) + ")"
                              : std::string());
  }

 private:
  struct Shard {
    std::vector<float> volume;
    std::vector<float> targets;
  };

  // The prefetcher's next sample (the file `path`), the rank's part of it, kept in the store
  // where there is one; adds the time waited for it to `io_seconds`.
  const Shard& read_next(const std::string& path, double& io_seconds) {
    const auto* sample = prefetcher_->next();
    if (sample == nullptr) throw std::runtime_error("the prefetcher ran out of samples");
    io_seconds += sample->stall_seconds;
    fresh_.volume = io_.read_sub_volume
                        ? std::vector<float>(sample->volume.begin(), sample->volume.end())
                        : crop(sample->volume, shape_, box_);
    const bool labels = layout_ == io::SampleLayout::segmentation;
    fresh_.targets = labels && !io_.read_sub_volume
                         ? crop(sample->targets, {.channels = 1, .spatial = shape_.spatial}, box_)
                         : sample->targets;
    if (auto problem = sanitize(path, fresh_); problem && !problem_) problem_ = problem;
    return keeps_samples() ? (store_[path] = fresh_) : fresh_;
  }

  // Values training cannot use: a NaN would turn the loss into NaN, a label outside the classes
  // would make the loss kernel refuse it on this rank while the others wait in a collective.
  // The first is returned, naming file and dataset, and every one replaced by 0, so that this
  // step runs like the others' before the ranks stop together (input_problem()).
  std::optional<InputError> sanitize(const std::string& path, Shard& shard) const {
    std::optional<InputError> problem;
    for (std::size_t i = 0; i < shard.volume.size(); ++i) {
      if (std::isfinite(shard.volume[i])) continue;
      if (!problem) {
        problem.emplace(SourceLocation{.file = path}, io::volume_dataset_name(layout_),
                        "expected finite values, got " + shortest(shard.volume[i]) +
                            " at element " + std::to_string(i) + " of this rank's part");
      }
      shard.volume[i] = 0;
    }
    const bool labels = layout_ == io::SampleLayout::segmentation;
    for (std::size_t i = 0; i < shard.targets.size(); ++i) {
      const float value = shard.targets[i];
      const bool sound =
          labels ? value >= 0 && value < static_cast<float>(classes_) : std::isfinite(value);
      if (sound) continue;
      if (!problem) {
        problem.emplace(SourceLocation{.file = path}, io::targets_dataset_name(layout_),
                        (labels ? "expected class labels 0.." + std::to_string(classes_ - 1)
                                : std::string("expected finite targets")) +
                            ", got " + shortest(value) + " at element " + std::to_string(i) +
                            " of this rank's part");
      }
      shard.targets[i] = 0;
    }
    return problem;
  }

  // The input plan decides: a store that cannot hold the rank's share is not used. The page
  // cache is the operating system's: the files are read again and it serves them.
  bool keeps_samples() const {
    return later_epochs_ != InputSource::file_system && later_epochs_ != InputSource::page_cache;
  }
  // Whatever io.store says, the samples come from this process's memory.
  InputSource store_source() const { return InputSource::own_memory; }

  std::string directory_;
  InputPlacement placement_;
  IoSection io_;
  std::int64_t classes_ = 0;
  InputSource later_epochs_ = InputSource::file_system;
  bool staged_ = false;
  std::vector<std::string> staging_paths_;  // the rank's share, read by stage()
  std::optional<InputError> problem_;
  io::VolumeShape shape_;
  io::SampleLayout layout_ = io::SampleLayout::cosmoflow;
  io::VolumeBox box_;
  std::vector<std::string> order_;  // every sample of every step, in order
  std::int64_t position_ = 0;
  std::map<std::string, Shard> store_;
  std::set<std::string> read_before_;
  Shard fresh_;
  InputSource last_source_ = InputSource::none;
  std::unique_ptr<io::SamplePrefetcher> prefetcher_;
};

}  // namespace

std::unique_ptr<StepInputSource> synthetic_input_source(const SyntheticInput& source,
                                                        const InputPlacement& placement) {
  return std::make_unique<SyntheticSource>(source, placement);
}

std::unique_ptr<StepInputSource> hdf5_input_source(const io::DatasetIndex& dataset,
                                                   const IoSection& io, const TargetLayout& targets,
                                                   const InputPlacement& placement,
                                                   std::int64_t steps, InputSource later_epochs,
                                                   bool staged) {
  return std::make_unique<Hdf5Source>(dataset, io, targets, placement, steps, later_epochs, staged);
}

}  // namespace tessera::kernels::real
