// The real backend's HDF5 input as the scenario's io section says: the rank's shard, read as a
// sub-volume or cut from the whole sample (the same values either way), and with a data store
// each file read once, later epochs served from host memory.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "hdf5_test_support.hpp"
#include "tessera/core/common/input_error.hpp"
#include "tessera/kernels/io/synthetic_dataset.hpp"
#include "tessera/kernels/real/step_input_source.hpp"
#include "tessera/kernels/real/synthetic_dataset_files.hpp"

namespace tessera::kernels::real {
namespace {

using io::testing::ScratchDirectory;

// 4 samples of 4 x 8^3; one sample a step; the rank holds depth planes 2..5.
constexpr std::int64_t kSamples = 4;

IoSection io_of(const ScratchDirectory& scratch) {
  IoSection io;
  io.format = DatasetFormat::hdf5;
  io.dataset = scratch.path();
  return io;
}

InputPlacement placement() {
  return {.samples_before = 0,
          .mini_batch = 1,
          .global_batch = 1,
          .first = {2, 0, 0},
          .count = {4, 8, 8}};
}

const TensorShape kSample{.n = 1, .c = 4, .spatial = {8, 8, 8}};
const TargetLayout kTargets{.task = TrainingTask::regression, .values_per_sample = 4};

std::vector<StepInput> read_steps(const IoSection& io, std::int64_t steps,
                                  std::vector<InputSource>* sources = nullptr,
                                  InputSource later_epochs = InputSource::file_system) {
  auto source = hdf5_input_source(checked_hdf5_dataset(io, kSample, kTargets), io, kTargets,
                                  placement(), steps, later_epochs);
  std::vector<StepInput> inputs;
  for (std::int64_t step = 0; step < steps; ++step) {
    double io_seconds = 0;
    inputs.push_back(source->next(io_seconds));
    if (sources) sources->push_back(source->last_source());
  }
  return inputs;
}

TEST(Hdf5InputSource, WholeSampleReadsGiveTheSameShardAsSubVolumeReads) {
  ScratchDirectory scratch;
  io::generate_synthetic_dataset(
      {.directory = scratch.path(), .samples = kSamples, .width = 8, .seed = 5});
  auto io = io_of(scratch);
  const auto sub_volume = read_steps(io, kSamples);
  io.read_sub_volume = false;
  io.prefetch = false;
  const auto whole = read_steps(io, kSamples);
  ASSERT_EQ(sub_volume.size(), whole.size());
  for (std::size_t step = 0; step < whole.size(); ++step) {
    EXPECT_EQ(sub_volume[step].volume.size(), 4u * 4 * 8 * 8);
    EXPECT_EQ(sub_volume[step].volume, whole[step].volume) << "step " << step;
    EXPECT_EQ(sub_volume[step].targets, whole[step].targets) << "step " << step;
  }
}

TEST(Hdf5InputSource, AStoreReadsEachFileOnceAndServesLaterEpochsFromMemory) {
  ScratchDirectory scratch;
  io::generate_synthetic_dataset(
      {.directory = scratch.path(), .samples = kSamples, .width = 8, .seed = 5});
  auto io = io_of(scratch);
  // The input plan decides: with io.store set but a plan that reads the file system every epoch
  // (the store could not hold the rank's share), every epoch reads the files.
  io.store = DataStore::memory;
  std::vector<InputSource> without_store;
  const auto plain = read_steps(io, 3 * kSamples, &without_store, InputSource::file_system);
  std::vector<InputSource> with_store;
  const auto stored = read_steps(io, 3 * kSamples, &with_store, InputSource::peer_memory);
  for (std::int64_t step = 0; step < 3 * kSamples; ++step) {
    const auto s = static_cast<std::size_t>(step);
    EXPECT_EQ(without_store[s], InputSource::file_system);
    EXPECT_EQ(with_store[s], step < kSamples ? InputSource::file_system : InputSource::own_memory)
        << "step " << step;
    EXPECT_EQ(plain[s].volume, stored[s].volume) << "step " << step;  // the same samples
  }
  // The files were removed after the first epoch: a store needs them no more.
  io.store = DataStore::node_local;
  auto source = hdf5_input_source(checked_hdf5_dataset(io, kSample, kTargets), io, kTargets,
                                  placement(), 2 * kSamples, InputSource::node_local_storage);
  double io_seconds = 0;
  for (std::int64_t step = 0; step < kSamples; ++step) (void)source->next(io_seconds);
  std::filesystem::remove_all(scratch.path());
  for (std::int64_t step = 0; step < kSamples; ++step) {
    EXPECT_FALSE(source->next(io_seconds).volume.empty());
    EXPECT_EQ(source->last_source(), InputSource::own_memory);
    EXPECT_EQ(io_seconds, 0);
  }
}

// Staged (io.store: node_local, the input plan's staging phase): stage() reads the rank's share
// of the data set, every sample its steps take, before the first step; every step, the first
// too, then takes its samples from the store, the same samples a plain source reads.
TEST(Hdf5InputSource, StagingReadsTheRanksShareBeforeTheFirstStep) {
  ScratchDirectory scratch;
  io::generate_synthetic_dataset(
      {.directory = scratch.path(), .samples = kSamples, .width = 8, .seed = 5});
  auto io = io_of(scratch);
  const auto plain = read_steps(io, 2 * kSamples);
  // Unstaged, stage() reads nothing.
  EXPECT_EQ(hdf5_input_source(checked_hdf5_dataset(io, kSample, kTargets), io, kTargets,
                              placement(), 1, InputSource::file_system)
                ->stage(),
            0);
  io.store = DataStore::node_local;
  // Two epochs of steps: four samples staged.
  auto source = hdf5_input_source(checked_hdf5_dataset(io, kSample, kTargets), io, kTargets,
                                  placement(), 2 * kSamples, InputSource::node_local_storage, true);
  EXPECT_GT(source->stage(), 0);
  EXPECT_NE(source->description().find("4 samples) staged"), std::string::npos)
      << source->description();
  std::filesystem::remove_all(scratch.path());  // staged: no step reads a file
  for (std::size_t step = 0; step < 2 * kSamples; ++step) {
    double io_seconds = 0;
    EXPECT_EQ(source->next(io_seconds).volume, plain[step].volume) << "step " << step;
    EXPECT_EQ(source->last_source(), InputSource::own_memory);
    EXPECT_EQ(io_seconds, 0);
  }
}

// The page cache is the operating system's: every epoch reads the files again (they may be
// gone from the cache, never from the disk), and the epochs after the first say where the
// simulator takes them from.
TEST(Hdf5InputSource, ThePageCacheRereadsTheFilesEveryEpoch) {
  ScratchDirectory scratch;
  io::generate_synthetic_dataset(
      {.directory = scratch.path(), .samples = kSamples, .width = 8, .seed = 5});
  auto io = io_of(scratch);
  io.store = DataStore::page_cache;
  auto source = hdf5_input_source(checked_hdf5_dataset(io, kSample, kTargets), io, kTargets,
                                  placement(), 2 * kSamples, InputSource::page_cache);
  double io_seconds = 0;
  for (std::int64_t step = 0; step < kSamples; ++step) {
    (void)source->next(io_seconds);
    EXPECT_EQ(source->last_source(), InputSource::file_system) << "step " << step;
  }
  (void)source->next(io_seconds);
  EXPECT_EQ(source->last_source(), InputSource::page_cache);
  std::filesystem::remove_all(scratch.path());  // not kept by the process: the next read fails
  EXPECT_ANY_THROW({
    for (std::int64_t step = 1; step < kSamples; ++step) (void)source->next(io_seconds);
  });
}

// int16 files read as float32 with the same values; the scenario must say which type the files
// hold (the simulator reads what it says), and a data set of the other type is a bad input.
TEST(Hdf5InputSource, Int16FilesReadAsTheirValuesAndMustBeDeclared) {
  ScratchDirectory floats;
  ScratchDirectory counts;
  io::generate_synthetic_dataset({.directory = floats.path(), .samples = 1, .width = 8, .seed = 5});
  io::generate_synthetic_dataset({.directory = counts.path(),
                                  .samples = 1,
                                  .width = 8,
                                  .seed = 5,
                                  .layout = {.dtype = StoredDType::int16}});
  auto io = io_of(counts);
  io.stored_dtype = StoredDType::int16;
  const auto rounded = read_steps(io, 1).front().volume;
  const auto exact = read_steps(io_of(floats), 1).front().volume;
  ASSERT_EQ(rounded.size(), exact.size());
  for (std::size_t i = 0; i < exact.size(); ++i) {
    ASSERT_EQ(rounded[i], std::round(exact[i])) << "element " << i;
  }
  try {
    (void)read_steps(io_of(counts), 1);  // io.stored_dtype left at float32
    FAIL() << "expected an InputError";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("io.stored_dtype"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("int16"), std::string::npos) << error.what();
  }
}

// The 3D U-Net layout: the files `tessera data generate --task segmentation` writes give every
// rank the very volume and voxel labels the in-memory data set of the same seed gives, read as a
// sub-volume or cut from the whole sample.
TEST(Hdf5InputSource, SegmentationFilesGiveTheInMemoryDataSet) {
  ScratchDirectory scratch;
  const TargetLayout labels{
      .task = TrainingTask::segmentation, .values_per_sample = 8 * 8 * 8, .classes = 3};
  const TensorShape sample{.n = 1, .c = 2, .spatial = {8, 8, 8}};
  write_synthetic_dataset(
      {.directory = scratch.path(), .samples = kSamples, .width = 8, .channels = 2, .seed = 9},
      labels);
  auto in_memory = synthetic_input_source(
      {.seed = 9, .dataset_samples = kSamples, .sample = sample, .targets = labels}, placement());
  auto io = io_of(scratch);
  auto sub_volume = hdf5_input_source(checked_hdf5_dataset(io, sample, labels), io, labels,
                                      placement(), kSamples, InputSource::file_system);
  io.read_sub_volume = false;
  auto whole = hdf5_input_source(checked_hdf5_dataset(io, sample, labels), io, labels, placement(),
                                 kSamples, InputSource::file_system);
  for (std::int64_t step = 0; step < kSamples; ++step) {
    double io_seconds = 0;
    const auto expected = in_memory->next(io_seconds);
    ASSERT_EQ(expected.targets.size(), 4u * 8 * 8);  // the rank's voxels' labels
    for (auto* source : {sub_volume.get(), whole.get()}) {
      const auto read = source->next(io_seconds);
      EXPECT_EQ(read.volume, expected.volume) << "step " << step;
      EXPECT_EQ(read.targets, expected.targets) << "step " << step;
    }
  }
}

TEST(Hdf5InputSource, ADataSetOfTheWrongLayoutForTheTaskIsABadInput) {
  ScratchDirectory scratch;
  io::generate_synthetic_dataset(
      {.directory = scratch.path(), .samples = 1, .width = 8, .seed = 5});
  const TargetLayout labels{
      .task = TrainingTask::segmentation, .values_per_sample = 8 * 8 * 8, .classes = 3};
  try {
    (void)checked_hdf5_dataset(io_of(scratch), kSample, labels);
    FAIL() << "expected an InputError";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("io.dataset"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("CosmoFlow"), std::string::npos) << error.what();
  }
}

TEST(SyntheticDatasetFiles, ClassificationHasNoFileLayout) {
  ScratchDirectory scratch;
  EXPECT_THROW(write_synthetic_dataset(
                   {.directory = scratch.path(), .samples = 1, .width = 8},
                   {.task = TrainingTask::classification, .values_per_sample = 1, .classes = 10}),
               InputError);
}

}  // namespace
}  // namespace tessera::kernels::real
