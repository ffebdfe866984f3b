// The spatially partitioned convolution against the unpartitioned one, in one process: every
// grid of 2..8 shards (2..4 in sanitized builds) along D, H and W alone and a few mixed grids,
// kernels 1/3/5, strides 1/2.
#include <gtest/gtest.h>

#include <ostream>
#include <stdexcept>

#include "partitioned_test_support.hpp"
#include "tessera/core/strategy/window_kernels.hpp"
#include "tessera/kernels/layer_geometry.hpp"

namespace tessera::kernels {
namespace {

using testing::check_partitioned_convolution;
using testing::cpu_device;
using testing::cubic_convolution;
using testing::grid_name;
using testing::partition_grids;

constexpr double kConvolutionTolerance = 1e-5;  // max |difference| / max |expected|

struct ConvolutionCase {
  std::vector<std::int64_t> grid;
  std::int64_t kernel = 3;
  std::int64_t stride = 1;
};

std::ostream& operator<<(std::ostream& out, const ConvolutionCase& c) {
  return out << "grid " << grid_name(c.grid) << ", kernel " << c.kernel << ", stride " << c.stride;
}

std::vector<ConvolutionCase> convolution_cases() {
  std::vector<ConvolutionCase> cases;
  for (const auto& grid : partition_grids()) {
    for (std::int64_t kernel : {1, 3, 5}) {
      for (std::int64_t stride : {1, 2}) cases.push_back({grid, kernel, stride});
    }
  }
  return cases;
}

class PartitionedConvolutionTest : public ::testing::TestWithParam<ConvolutionCase> {};

// 16^3 volume, batch 2, 2 -> 3 channels: uneven shards for 3, 5, 6 and 7 parts.
TEST_P(PartitionedConvolutionTest, MatchesUnpartitionedForwardAndBothGradients) {
  const ConvolutionCase& c = GetParam();
  const auto whole = cubic_convolution(3, 16, 2, 3, c.kernel, c.stride);
  std::int64_t shards = 1;
  for (std::int64_t parts : c.grid) shards *= parts;
  auto exchange = in_process_halo_exchange(cpu_device(), shards);
  // Always overlapped: the interior/boundary split is the path with the most to get wrong.
  const auto errors =
      check_partitioned_convolution(*exchange, whole, c.grid, 2, 17, HaloOverlap::always);
  EXPECT_LE(errors.output, kConvolutionTolerance);
  EXPECT_LE(errors.input_gradient, kConvolutionTolerance);
  EXPECT_LE(errors.filter_gradient, kConvolutionTolerance);
}

INSTANTIATE_TEST_SUITE_P(Grids, PartitionedConvolutionTest,
                         ::testing::ValuesIn(convolution_cases()),
                         [](const ::testing::TestParamInfo<ConvolutionCase>& case_info) {
                           return "grid" + grid_name(case_info.param.grid) + "_k" +
                                  std::to_string(case_info.param.kernel) + "_s" +
                                  std::to_string(case_info.param.stride);
                         });

TEST(PartitionedConvolution, TwoDimensionalAndBatchOneAlsoMatchWithEveryOverlapPolicy) {
  const auto whole = cubic_convolution(2, 30, 3, 4, 3, 1);
  auto exchange = in_process_halo_exchange(cpu_device(), 6);
  for (const auto overlap : {HaloOverlap::automatic, HaloOverlap::always, HaloOverlap::never}) {
    const auto errors = check_partitioned_convolution(*exchange, whole, {3, 2}, 1, 5, overlap);
    EXPECT_LE(errors.output, kConvolutionTolerance);
    EXPECT_LE(errors.input_gradient, kConvolutionTolerance);
    EXPECT_LE(errors.filter_gradient, kConvolutionTolerance);
  }
}

// The layer core sees for a convolution geometry (one sample).
ResolvedLayer resolved(const ConvolutionGeometry& g) {
  ResolvedLayer layer;
  layer.layer = {.name = "conv",
                 .kind = LayerKind::convolution,
                 .params = ConvolutionParams{.out_channels = g.out_channels,
                                             .kernel = g.kernel,
                                             .stride = g.stride,
                                             .padding = g.padding,
                                             .dilation = g.dilation}};
  layer.input_shapes = {{.n = 1, .c = g.in_channels, .spatial = g.input_spatial}};
  layer.output_shape = {.n = 1, .c = g.out_channels, .spatial = g.output_spatial};
  return layer;
}

// The windows core plans and times (window_kernels.hpp) are the problems the partitioned kernel
// runs: given a plan for each of them (the first algorithm offered for it), it runs no problem
// unplanned, and still matches the unpartitioned convolution.
TEST(PartitionedConvolution, RunsExactlyTheWindowsCorePlans) {
  struct WindowCase {
    std::vector<std::int64_t> grid;
    std::int64_t stride;
    HaloOverlap overlap;
  };
  for (const WindowCase& c : {WindowCase{{3, 1, 1}, 1, HaloOverlap::always},
                              WindowCase{{2, 2, 1}, 2, HaloOverlap::always},
                              WindowCase{{1, 3, 2}, 1, HaloOverlap::never}}) {
    SCOPED_TRACE("grid " + grid_name(c.grid));
    const auto whole = cubic_convolution(3, 12, 2, 3, 3, c.stride);
    const ResolvedLayer layer = resolved(whole);
    const std::int64_t batch = 2;
    auto runner = std::make_unique<ConvolutionRunner>(cpu_device());
    std::size_t windows = 0;
    for (const auto direction :
         {Direction::forward, Direction::backward_data, Direction::backward_filter}) {
      std::vector<StepPart> parts{StepPart::whole};
      if (direction == Direction::forward && c.overlap == HaloOverlap::always) {
        parts = {StepPart::interior, StepPart::boundary};
      }
      for (const StepPart part : parts) {
        for (const auto& shard : window_kernels_by_shard(layer, c.grid, direction, part)) {
          for (const WindowKernel& window : shard) {
            const auto geometry = convolution_geometry(window.layer, window.input, window.output);
            const auto offered = cpu_device().convolutions().algorithms(geometry, batch, direction);
            ASSERT_FALSE(offered.empty()) << window.shape;
            runner->follow(geometry, batch, direction,
                           {{{.samples = batch, .algorithm = offered.front().name}}});
            ++windows;
          }
        }
      }
    }
    std::int64_t shards = 1;
    for (std::int64_t parts : c.grid) shards *= parts;
    EXPECT_GE(windows,
              static_cast<std::size_t>(3 * shards));  // a window per shard and pass at least
    auto exchange = in_process_halo_exchange(cpu_device(), shards);
    const auto errors = check_partitioned_convolution(*exchange, whole, c.grid, batch, 11,
                                                      c.overlap, std::move(runner));
    EXPECT_TRUE(errors.unplanned_problems.empty())
        << errors.unplanned_problems.size() << " unplanned, e.g. "
        << errors.unplanned_problems.front();
    EXPECT_LE(errors.output, kConvolutionTolerance);
    EXPECT_LE(errors.input_gradient, kConvolutionTolerance);
    EXPECT_LE(errors.filter_gradient, kConvolutionTolerance);
  }
}

TEST(PartitionedConvolution, RejectsAHaloWiderThanTheNeighbouringShard) {
  // 7^3 kernel needs 3 planes; 16 planes split 8 ways leaves 2 per shard.
  const auto whole = cubic_convolution(3, 16, 1, 1, 7, 1);
  auto exchange = in_process_halo_exchange(cpu_device(), 8);
  try {
    PartitionedConvolution partitioned(*exchange, whole, {8, 1, 1}, 1);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("split fewer ways"), std::string::npos)
        << error.what();
  }
}

TEST(PartitionedConvolution, RejectsAGridWithShardsWithoutOutputs) {
  // Stride 2 halves 8 planes to 4 outputs, too few for 8 shards.
  const auto whole = cubic_convolution(3, 8, 1, 1, 3, 2);
  auto exchange = in_process_halo_exchange(cpu_device(), 8);
  try {
    PartitionedConvolution partitioned(*exchange, whole, {1, 1, 8}, 1);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("4 planes along W, fewer than the 8 shards"),
              std::string::npos)
        << error.what();
  }
}

// The interior (computed while halos fly) and the boundary boxes tile the shard's outputs.
TEST(PartitionedConvolution, InteriorAndBoundaryBoxesTileTheOutputs) {
  for (const auto& grid : partition_grids()) {
    for (std::int64_t stride : {1, 2}) {
      const auto whole = cubic_convolution(3, 16, 1, 1, 3, stride);
      const WindowPlan plan(LayerKind::convolution, TensorDistribution(whole.input_spatial, grid),
                            {{3, stride, 1, 1}, {3, stride, 1, 1}, {3, stride, 1, 1}},
                            BoundaryPadding::zeros_in_buffer);
      for (std::int64_t shard = 0; shard < plan.input().shard_count(); ++shard) {
        const ShardWindow& window = plan.shard(shard);
        const OutputSplit split = split_interior(plan, window);
        std::int64_t voxels = split.interior.volume();
        std::vector<SpatialBox> boxes = split.boundary;
        if (!split.interior.empty()) boxes.push_back(split.interior);
        for (std::size_t i = 0; i < boxes.size(); ++i) {
          EXPECT_TRUE(contains(window.outputs, boxes[i]));
          for (std::size_t j = 0; j < i; ++j) EXPECT_TRUE(intersection(boxes[i], boxes[j]).empty());
        }
        for (const SpatialBox& box : split.boundary) voxels += box.volume();
        EXPECT_EQ(voxels, window.outputs.volume()) << grid_name(grid) << " shard " << shard;
        // The interior reads no halo plane.
        if (!split.interior.empty()) {
          EXPECT_TRUE(contains(window.ready_before_exchange, plan.window_of(split.interior)));
        }
      }
    }
  }
}

}  // namespace
}  // namespace tessera::kernels
