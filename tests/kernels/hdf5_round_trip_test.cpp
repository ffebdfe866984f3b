// Writing and reading whole sample files, the synthetic generator and the dataset index.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "hdf5_test_support.hpp"
#include "tessera/core/common/input_error.hpp"
#include "tessera/kernels/io/dataset_index.hpp"
#include "tessera/kernels/io/sample_reader.hpp"
#include "tessera/kernels/io/synthetic_dataset.hpp"

namespace tessera::kernels::io {
namespace {

using testing::ScratchDirectory;

std::vector<float> read_whole(const std::string& path, std::vector<float>* targets = nullptr) {
  SampleReader reader(path);
  std::vector<float> volume(static_cast<std::size_t>(reader.shape().floats()));
  reader.read_volume(whole_volume(reader.shape()), volume);
  if (targets != nullptr) *targets = reader.read_targets(whole_volume(reader.shape()));
  return volume;
}

std::vector<float> as_vector(const Targets& targets) {
  return {targets.begin(), targets.end()};
}

class RoundTrip : public ::testing::TestWithParam<std::int64_t> {};

TEST_P(RoundTrip, VolumeAndTargetsComeBackBitForBit) {
  ScratchDirectory scratch;
  const VolumeShape shape{.channels = 3, .spatial = {5, 6, 7}};
  const auto volume = testing::numbered_volume(shape, 0.5f);
  const Targets targets{0.25f, -0.5f, 1.0f, -1.0f};
  const auto path = scratch.file("sample.h5");
  write_sample_file(path, shape, targets, volume, {.chunk_depth = GetParam()});

  const auto info = inspect_sample_file(path);
  EXPECT_EQ(info.shape, shape);
  EXPECT_EQ(info.chunk_depth, GetParam());
  EXPECT_EQ(info.volume_offset_bytes >= 0, GetParam() == 0);  // contiguous data has an offset
  std::vector<float> read_targets;
  EXPECT_EQ(read_whole(path, &read_targets), volume);
  EXPECT_EQ(read_targets, as_vector(targets));
  EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
}

INSTANTIATE_TEST_SUITE_P(ContiguousAndChunked, RoundTrip, ::testing::Values(0, 1, 2));

TEST(RoundTrip, Int16VolumesHoldTheNearestIntegersAndReadAsFloat32) {
  ScratchDirectory scratch;
  const VolumeShape shape{.channels = 1, .spatial = {1, 2, 4}};
  // Rounded to nearest (not truncated toward zero), clamped to int16's range.
  const std::vector<float> volume{0.4f, 0.6f, -0.6f, -2.5f, 1.5f, 123.49f, 1e6f, -1e6f};
  const std::vector<float> stored{0, 1, -1, -3, 2, 123, 32767, -32768};
  const auto path = scratch.file("counts.h5");
  write_sample_file(path, shape, {}, volume, {.dtype = StoredDType::int16});
  const auto info = inspect_sample_file(path);
  EXPECT_EQ(info.volume_dtype, StoredDType::int16);
  EXPECT_EQ(read_whole(path), stored);
  const auto index = index_dataset(scratch.path());
  EXPECT_EQ(index.volume_dtype, StoredDType::int16);
  EXPECT_DOUBLE_EQ(index.volume_bytes_per_sample(), 8 * 2);

  // One data set, one type.
  write_sample_file(scratch.file("floats.h5"), shape, {}, volume);
  try {
    index_dataset(scratch.path());
    FAIL() << "a data set mixing int16 and float32 volumes was indexed";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("every sample must have one type"), std::string::npos)
        << error.what();
  }
}

TEST(SyntheticDataset, TargetsAreRecoverableFromTheVolume) {
  ScratchDirectory scratch;
  const auto paths = generate_synthetic_dataset(
      {.directory = scratch.path(), .samples = 3, .width = 16, .channels = 4, .seed = 7});
  ASSERT_EQ(paths.size(), 3u);
  for (std::size_t i = 0; i < paths.size(); ++i) {
    std::vector<float> stored;
    const auto volume = read_whole(paths[i], &stored);
    ASSERT_EQ(stored, as_vector(synthetic_targets(7, static_cast<std::int64_t>(i))));
    const auto estimated = estimate_targets({.channels = 4, .spatial = {16, 16, 16}}, volume);
    // The noise's share of each estimate has standard deviation sqrt(2 / 16384) ~ 0.011.
    for (int k = 0; k < kTargetCount; ++k) {
      EXPECT_NEAR(estimated[k], stored[k], 0.06) << paths[i] << " target " << k;
      EXPECT_GE(stored[k], -1.0f);
      EXPECT_LE(stored[k], 1.0f);
    }
  }
}

TEST(SyntheticDataset, IsDeterministicInTheSeed) {
  ScratchDirectory first, second, other;
  const SyntheticDatasetSpec spec{.samples = 2, .width = 8, .channels = 2, .seed = 42};
  auto with_directory = [&](const ScratchDirectory& directory, std::uint64_t seed) {
    auto copy = spec;
    copy.directory = directory.path();
    copy.seed = seed;
    return generate_synthetic_dataset(copy);
  };
  const auto a = with_directory(first, 42), b = with_directory(second, 42),
             c = with_directory(other, 43);
  EXPECT_EQ(read_whole(a[1]), read_whole(b[1]));
  EXPECT_NE(read_whole(a[1]), read_whole(c[1]));
  EXPECT_NE(read_whole(a[0]), read_whole(a[1]));  // samples differ from each other
  EXPECT_NE(synthetic_targets(42, 0), synthetic_targets(42, 1));
}

TEST(SyntheticDataset, NoiseHasUnitVariance) {
  const VolumeShape shape{.channels = 1, .spatial = {16, 16, 16}};
  const Targets zero{};
  std::vector<float> planes(static_cast<std::size_t>(shape.floats()));
  fill_synthetic_planes(1, 0, shape, zero, 0, 0, 16, planes);
  double sum = 0, squares = 0;
  for (const float value : planes) {
    sum += value;
    squares += value * value;
  }
  const double count = static_cast<double>(planes.size());
  EXPECT_NEAR(sum / count, 0.0, 0.05);
  EXPECT_NEAR(squares / count, 1.0, 0.05);
}

TEST(SyntheticDataset, BadSpecNamesTheOption) {
  ScratchDirectory scratch;
  const auto message = [&](SyntheticDatasetSpec spec) {
    spec.directory = scratch.path();
    try {
      generate_synthetic_dataset(spec);
    } catch (const InputError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message({.samples = 0, .width = 8}).find("--samples: expected at least 1"),
            std::string::npos);
  EXPECT_NE(message({.samples = 1, .width = 2}).find("--width: expected at least 4, got 2"),
            std::string::npos);
  EXPECT_NE(message({.samples = 1, .width = 8, .channels = 0}).find("--channels"),
            std::string::npos);
}

TEST(DatasetIndex, ListsSampleFilesInNameOrderAndIgnoresOthers) {
  ScratchDirectory scratch;
  generate_synthetic_dataset({.directory = scratch.path(), .samples = 3, .width = 4, .seed = 1});
  std::ofstream(scratch.file("README.txt")) << "not a sample\n";
  const auto index = index_dataset(scratch.path());
  ASSERT_EQ(index.samples.size(), 3u);
  EXPECT_EQ(index.shape, (VolumeShape{.channels = 4, .spatial = {4, 4, 4}}));
  EXPECT_EQ(index.paths()[0], scratch.file("sample_000000.h5"));
  EXPECT_EQ(index.paths()[2], scratch.file("sample_000002.h5"));
  EXPECT_DOUBLE_EQ(index.volume_bytes_per_sample(), 4 * 64 * 4);
}

}  // namespace
}  // namespace tessera::kernels::io
