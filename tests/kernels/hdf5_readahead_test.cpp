// The byte runs the reader announces to the kernel before a hyperslab read: one per channel for a
// depth slab, and they hold exactly the slab's values in a real sample file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "hdf5_test_support.hpp"
#include "io/readahead_hint.hpp"
#include "tessera/kernels/io/sample_reader.hpp"

namespace tessera::kernels::io {
namespace {

const VolumeShape kReadaheadShape{.channels = 2, .spatial = {8, 6, 5}};
constexpr std::int64_t kPlaneBytes = 6 * 5 * 4;
constexpr std::int64_t kChannelBytes = 8 * kPlaneBytes;

TEST(ReadaheadRuns, DepthSlabIsOneRunPerChannel) {
  const auto box = slab(kReadaheadShape, 0, 1, 4);  // D[2,4)
  EXPECT_EQ(box_byte_runs(4096, kReadaheadShape, box),
            (std::vector<ByteRun>{
                {4096 + 2 * kPlaneBytes, 4096 + 4 * kPlaneBytes},
                {4096 + kChannelBytes + 2 * kPlaneBytes, 4096 + kChannelBytes + 4 * kPlaneBytes}}));
}

TEST(ReadaheadRuns, WholeVolumeIsOneRun) {
  EXPECT_EQ(box_byte_runs(0, kReadaheadShape, whole_volume(kReadaheadShape)),
            (std::vector<ByteRun>{{0, 2 * kChannelBytes}}));
}

TEST(ReadaheadRuns, HeightSplitIsOneRunPerPlaneFromFirstToLastRow) {
  const VolumeBox box{.begin = {0, 3, 1}, .end = {2, 6, 4}};  // rows 3..5, columns 1..3
  const auto runs = box_byte_runs(0, kReadaheadShape, box);
  ASSERT_EQ(runs.size(), 4u);  // 2 channels x 2 planes
  EXPECT_EQ(runs[0], (ByteRun{(3 * 5 + 1) * 4, (5 * 5 + 4) * 4}));
  EXPECT_EQ(runs[3], (ByteRun{kChannelBytes + kPlaneBytes + (3 * 5 + 1) * 4,
                              kChannelBytes + kPlaneBytes + (5 * 5 + 4) * 4}));
}

TEST(ReadaheadRuns, DepthSlabRunsHoldExactlyTheSlabInTheFile) {
  testing::ScratchDirectory scratch;
  const auto path = scratch.file("sample.h5");
  write_sample_file(path, kReadaheadShape, Targets{},
                    testing::numbered_volume(kReadaheadShape, 7.0f));
  SampleReader reader(path);
  ASSERT_GE(reader.info().volume_offset_bytes, 0);
  const auto box = slab(kReadaheadShape, 0, 2, 4);
  std::vector<float> expected(static_cast<std::size_t>(sub_volume_floats(kReadaheadShape, box)));
  reader.read_volume(box, expected);

  std::vector<float> from_runs;
  const int file = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(file, 0);
  for (const auto& run : box_byte_runs(reader.info().volume_offset_bytes, kReadaheadShape, box)) {
    std::vector<float> values(static_cast<std::size_t>(run.end - run.begin) / sizeof(float));
    ASSERT_EQ(::pread(file, values.data(), values.size() * sizeof(float), run.begin),
              static_cast<ssize_t>(values.size() * sizeof(float)));
    from_runs.insert(from_runs.end(), values.begin(), values.end());
  }
  ::close(file);
  EXPECT_EQ(from_runs, expected);
}

}  // namespace
}  // namespace tessera::kernels::io
