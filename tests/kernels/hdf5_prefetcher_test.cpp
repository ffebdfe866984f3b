// The prefetcher delivers samples in the given order with the right contents, reads exactly one
// sample ahead of the caller, accounts the caller's stalls, and reports a bad file at its turn.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "hdf5_test_support.hpp"
#include "tessera/core/common/input_error.hpp"
#include "tessera/kernels/io/sample_prefetcher.hpp"
#include "tessera/kernels/io/sample_reader.hpp"
#include "tessera/kernels/io/synthetic_dataset.hpp"

namespace tessera::kernels::io {
namespace {

using namespace std::chrono_literals;
using testing::ScratchDirectory;

constexpr std::uint64_t kSeed = 11;
const VolumeShape kShape{.channels = 4, .spatial = {8, 8, 8}};

std::vector<std::string> small_dataset(const ScratchDirectory& scratch, std::int64_t samples) {
  return generate_synthetic_dataset(
      {.directory = scratch.path(), .samples = samples, .width = 8, .seed = kSeed});
}

TEST(SamplePrefetcher, DeliversSamplesInTheGivenOrderWithTheirSubVolumes) {
  ScratchDirectory scratch;
  auto paths = small_dataset(scratch, 4);
  std::swap(paths[0], paths[3]);  // the caller's order, not the directory's
  const auto box = slab(kShape, 0, 1, 2);
  const SpatialHalo halo{Halo{.lower = 1, .upper = 1}, Halo{}, Halo{}};
  SamplePrefetcher prefetcher(paths, box, halo);
  for (std::int64_t position = 0; position < 4; ++position) {
    const auto* sample = prefetcher.next();
    ASSERT_NE(sample, nullptr);
    EXPECT_EQ(sample->position, position);
    EXPECT_EQ(sample->path, paths[static_cast<std::size_t>(position)]);
    EXPECT_EQ(sample->region, (VolumeBox{.begin = {3, 0, 0}, .end = {8, 8, 8}}));  // clipped above
    SampleReader reader(sample->path);
    std::vector<float> expected(
        static_cast<std::size_t>(sub_volume_floats(kShape, sample->region)));
    reader.read_volume(sample->region, expected);
    EXPECT_TRUE(
        std::equal(expected.begin(), expected.end(), sample->volume.begin(), sample->volume.end()));
    const std::int64_t sample_index = position == 0 ? 3 : position == 3 ? 0 : position;
    const auto targets = synthetic_targets(kSeed, sample_index);
    EXPECT_EQ(sample->targets, std::vector<float>(targets.begin(), targets.end()));
  }
  EXPECT_EQ(prefetcher.next(), nullptr);
  EXPECT_EQ(prefetcher.next(), nullptr);
  const auto statistics = prefetcher.statistics();
  EXPECT_EQ(statistics.samples, 4);
  EXPECT_DOUBLE_EQ(statistics.bytes, 4.0 * (4 * 5 * 8 * 8 * 4 + 16));
  EXPECT_GT(statistics.read_seconds, 0);
  EXPECT_GT(statistics.read_bytes_per_second(), 0);
}

TEST(SamplePrefetcher, ReadsExactlyOneSampleAheadWhileTheCallerComputes) {
  ScratchDirectory scratch;
  SamplePrefetcher prefetcher(small_dataset(scratch, 4), whole_volume(kShape));
  ASSERT_NE(prefetcher.next(), nullptr);
  // "Compute" on sample 0 until sample 1 has been read meanwhile (a busy machine may take a
  // while), then long enough for a reader that runs further ahead to show it.
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (prefetcher.statistics().samples < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(prefetcher.statistics().samples, 2);  // sample 1 was read meanwhile, not sample 2
}

TEST(SamplePrefetcher, WithoutReadAheadReadsOnlyWhatWasAskedFor) {
  ScratchDirectory scratch;
  SamplePrefetcher prefetcher(small_dataset(scratch, 4), whole_volume(kShape), {}, false);
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(prefetcher.statistics().samples, 0);  // nothing asked for yet
  for (std::int64_t position = 0; position < 4; ++position) {
    const auto* sample = prefetcher.next();
    ASSERT_NE(sample, nullptr);
    EXPECT_EQ(sample->position, position);
    EXPECT_GT(sample->stall_seconds, 0);  // the caller waited for every read
    std::this_thread::sleep_for(50ms);    // "compute": no read ahead meanwhile
    EXPECT_EQ(prefetcher.statistics().samples, position + 1);
  }
  EXPECT_EQ(prefetcher.next(), nullptr);
}

TEST(SamplePrefetcher, ComputeLongerThanTheReadHidesItAndNoComputeStalls) {
  ScratchDirectory scratch;
  const auto paths = small_dataset(scratch, 4);
  {
    SamplePrefetcher prefetcher(paths, whole_volume(kShape));
    double stalls = 0;
    while (const auto* sample = prefetcher.next()) stalls += sample->stall_seconds;
    // The statistics' stall is the caller's waits added up (the first read may have finished
    // before the first call: the reader starts at once).
    EXPECT_DOUBLE_EQ(prefetcher.statistics().stall_seconds, stalls);
  }
  SamplePrefetcher prefetcher(paths, whole_volume(kShape));
  int later = 0, hidden = 0;
  while (const auto* sample = prefetcher.next()) {
    // A sample after the first was read while the caller computed, so it waits for less than
    // the read. On a busy machine the reader thread may now and then not run for the whole
    // compute, so most such samples, not each, must be hidden.
    if (sample->position > 0) {
      ++later;
      if (sample->stall_seconds < sample->read_seconds) ++hidden;
    }
    std::this_thread::sleep_for(250ms);
  }
  EXPECT_EQ(later, 3);
  EXPECT_GE(2 * hidden, later) << hidden << " of " << later << " reads hidden behind compute";
}

TEST(SamplePrefetcher, BadFileIsReportedAtItsTurnNamingTheFile) {
  ScratchDirectory scratch;
  auto paths = small_dataset(scratch, 2);
  paths.insert(paths.begin() + 1, scratch.file("missing.h5"));
  SamplePrefetcher prefetcher(paths, whole_volume(kShape));
  ASSERT_NE(prefetcher.next(), nullptr);
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      prefetcher.next();
      ADD_FAILURE() << "no error for the missing file";
    } catch (const InputError& error) {
      EXPECT_EQ(error.where().file, scratch.file("missing.h5"));
      EXPECT_NE(std::string(error.what()).find("no such file"), std::string::npos);
    }
  }
}

TEST(SamplePrefetcher, StopsCleanlyWhenDestroyedEarly) {
  ScratchDirectory scratch;
  const auto paths = small_dataset(scratch, 3);
  SamplePrefetcher unused(paths, whole_volume(kShape));
  SamplePrefetcher one_taken(paths, whole_volume(kShape));
  EXPECT_NE(one_taken.next(), nullptr);
}

}  // namespace
}  // namespace tessera::kernels::io
