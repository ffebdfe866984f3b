// A rank's sub-volume read with one hyperslab equals the same box cut out of the whole volume,
// for interior boxes, boxes on the boundary and boxes widened by halos (clipped at the edge).
#include <gtest/gtest.h>

#include "hdf5_test_support.hpp"
#include "tessera/core/common/input_error.hpp"
#include "tessera/kernels/io/sample_reader.hpp"

namespace tessera::kernels::io {
namespace {

using testing::ScratchDirectory;

// `box` cut out of a whole C x D x H x W volume, the reference the hyperslab must match.
std::vector<float> cut(const std::vector<float>& volume, const VolumeShape& shape,
                       const VolumeBox& box) {
  std::vector<float> part;
  const auto [depth, height, width] = shape.spatial;
  for (std::int64_t c = 0; c < shape.channels; ++c) {
    for (std::int64_t d = box.begin[0]; d < box.end[0]; ++d) {
      for (std::int64_t h = box.begin[1]; h < box.end[1]; ++h) {
        for (std::int64_t w = box.begin[2]; w < box.end[2]; ++w) {
          part.push_back(
              volume[static_cast<std::size_t>(((c * depth + d) * height + h) * width + w)]);
        }
      }
    }
  }
  return part;
}

class HyperslabRead : public ::testing::TestWithParam<std::int64_t> {
 protected:
  void SetUp() override {
    write_sample_file(path_, shape_, Targets{}, volume_, {.chunk_depth = GetParam()});
  }
  std::vector<float> read(const VolumeBox& box) {
    SampleReader reader(path_);
    std::vector<float> out(static_cast<std::size_t>(sub_volume_floats(shape_, box)));
    reader.read_volume(box, out);
    return out;
  }

  ScratchDirectory scratch_;
  const std::string path_ = scratch_.file("sample.h5");
  const VolumeShape shape_{.channels = 2, .spatial = {8, 6, 5}};
  const std::vector<float> volume_ = testing::numbered_volume(shape_);
};

TEST_P(HyperslabRead, DepthSlabsEqualTheirSliceOfTheWholeVolume) {
  for (std::int64_t parts : {1, 2, 3, 4, 8}) {
    for (std::int64_t part = 0; part < parts; ++part) {
      const auto box = slab(shape_, 0, part, parts);
      EXPECT_EQ(read(box), cut(volume_, shape_, box)) << describe(box);
    }
  }
}

TEST_P(HyperslabRead, InteriorAndBoundaryBoxesOnEveryAxis) {
  const std::vector<VolumeBox> boxes = {
      {.begin = {2, 1, 1}, .end = {5, 4, 3}},  // interior
      {.begin = {0, 0, 0}, .end = {1, 1, 1}},  // corner voxel
      {.begin = {7, 5, 4}, .end = {8, 6, 5}},  // opposite corner
      {.begin = {0, 3, 0}, .end = {8, 6, 5}},  // height split, upper half
      {.begin = {0, 0, 2}, .end = {8, 6, 3}},  // one width plane
  };
  for (const auto& box : boxes) EXPECT_EQ(read(box), cut(volume_, shape_, box)) << describe(box);
}

TEST_P(HyperslabRead, HalosWidenTheBoxAndAreClippedAtTheBoundary) {
  const SpatialHalo halo{Halo{.lower = 1, .upper = 2}, Halo{.lower = 1, .upper = 1}, Halo{}};
  const auto first = slab(shape_, 0, 0, 4);  // D[0,2): no planes below, two above
  const auto widened_first = with_halo(first, halo, shape_);
  EXPECT_EQ(widened_first, (VolumeBox{.begin = {0, 0, 0}, .end = {4, 6, 5}}));
  const auto middle = slab(shape_, 0, 1, 4);  // D[2,4)
  const auto widened_middle = with_halo(middle, halo, shape_);
  EXPECT_EQ(widened_middle, (VolumeBox{.begin = {1, 0, 0}, .end = {6, 6, 5}}));
  const auto last = slab(shape_, 0, 3, 4);  // D[6,8): two planes above are cut off
  const auto widened_last = with_halo(last, halo, shape_);
  EXPECT_EQ(widened_last, (VolumeBox{.begin = {5, 0, 0}, .end = {8, 6, 5}}));
  const VolumeBox inner{.begin = {3, 2, 1}, .end = {5, 4, 4}};
  const auto widened_inner = with_halo(inner, halo, shape_);
  EXPECT_EQ(widened_inner, (VolumeBox{.begin = {2, 1, 1}, .end = {7, 5, 4}}));
  for (const auto& box : {widened_first, widened_middle, widened_last, widened_inner}) {
    EXPECT_EQ(read(box), cut(volume_, shape_, box)) << describe(box);
  }
}

TEST_P(HyperslabRead, BoxOutsideTheVolumeNamesTheFile) {
  SampleReader reader(path_);
  std::vector<float> out(1000);
  for (const VolumeBox& box : {VolumeBox{.begin = {0, 0, 0}, .end = {9, 6, 5}},
                               VolumeBox{.begin = {3, 0, 0}, .end = {3, 6, 5}},
                               VolumeBox{.begin = {-1, 0, 0}, .end = {2, 6, 5}}}) {
    try {
      reader.read_volume(box, std::span<float>(out.data(), 10));
      ADD_FAILURE() << "no error for " << describe(box);
    } catch (const InputError& error) {
      EXPECT_EQ(error.where().file, path_);
      EXPECT_NE(std::string(error.what()).find("outside the 2x8x6x5 (C,D,H,W) volume"),
                std::string::npos)
          << error.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ContiguousAndChunked, HyperslabRead, ::testing::Values(0, 3));

TEST(VolumeSlab, UnevenSplitsCoverTheExtentOnce) {
  const VolumeShape shape{.channels = 1, .spatial = {10, 4, 4}};
  std::int64_t next = 0;
  for (std::int64_t part = 0; part < 4; ++part) {
    const auto box = slab(shape, 0, part, 4);
    EXPECT_EQ(box.begin[0], next);
    EXPECT_EQ(box.extent(0), part < 2 ? 3 : 2);
    next = box.end[0];
  }
  EXPECT_EQ(next, 10);
  EXPECT_THROW(slab(shape, 0, 0, 11), std::invalid_argument);
  EXPECT_THROW(slab(shape, 3, 0, 1), std::invalid_argument);
}

}  // namespace
}  // namespace tessera::kernels::io
