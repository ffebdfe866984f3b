// The spatially partitioned convolution and pooling on a GPU against the unpartitioned ones on
// the same GPU, over the grids and cases of partitioned_convolution_test and
// partitioned_pooling_test: forward and gradients, 3D and 2D, every overlap policy. The halo
// exchange copies between shards in device memory, and the shards' thin slabs meet cuDNN algorithms
// the whole volume never does. Skips without a CUDA device.
#include <gtest/gtest.h>

#include <ostream>

#include "cuda_test_support.hpp"
#include "partitioned_test_support.hpp"

namespace tessera::kernels {
namespace {

using testing::check_partitioned_convolution;
using testing::check_partitioned_pooling;
using testing::cubic_convolution;
using testing::cubic_pooling;
using testing::grid_name;
using testing::partition_grids;

// max |difference| / max |expected|. cuDNN picks its algorithm per shard shape, and shards and
// the whole volume may get different ones, FFT and Winograd among them (1e-3 of the magnitude in
// cuda_convolution_test); a halo plane missed or added is off by a whole term.
constexpr double kCudaPartitionedTolerance = 1e-3;

struct GridCase {
  std::vector<std::int64_t> grid;
  std::int64_t kernel = 3;
  std::int64_t stride = 1;
};

std::ostream& operator<<(std::ostream& out, const GridCase& c) {
  return out << "grid " << grid_name(c.grid) << ", kernel " << c.kernel << ", stride " << c.stride;
}

std::vector<GridCase> grid_cases() {
  std::vector<GridCase> cases;
  for (const auto& grid : partition_grids()) {
    for (std::int64_t kernel : {1, 3, 5}) {
      for (std::int64_t stride : {1, 2}) cases.push_back({grid, kernel, stride});
    }
  }
  return cases;
}

std::string grid_case_name(const ::testing::TestParamInfo<GridCase>& info) {
  return "grid" + grid_name(info.param.grid) + "_k" + std::to_string(info.param.kernel) + "_s" +
         std::to_string(info.param.stride);
}

std::int64_t shards_of(const std::vector<std::int64_t>& grid) {
  std::int64_t shards = 1;
  for (std::int64_t parts : grid) shards *= parts;
  return shards;
}

using CudaPartitionedConvolution = testing::WithCudaDevice<::testing::TestWithParam<GridCase>>;

// 16^3 volume, batch 2, 2 -> 3 channels: uneven shards for 3, 5, 6 and 7 parts.
TEST_P(CudaPartitionedConvolution, MatchesUnpartitionedForwardAndBothGradients) {
  const GridCase& c = GetParam();
  const auto whole = cubic_convolution(3, 16, 2, 3, c.kernel, c.stride);
  auto exchange = in_process_halo_exchange(gpu(), shards_of(c.grid));
  const auto errors =
      check_partitioned_convolution(*exchange, whole, c.grid, 2, 17, HaloOverlap::always);
  EXPECT_LE(errors.output, kCudaPartitionedTolerance);
  EXPECT_LE(errors.input_gradient, kCudaPartitionedTolerance);
  EXPECT_LE(errors.filter_gradient, kCudaPartitionedTolerance);
}

INSTANTIATE_TEST_SUITE_P(Grids, CudaPartitionedConvolution, ::testing::ValuesIn(grid_cases()),
                         grid_case_name);

using CudaPartitionedConvolution2d = testing::WithCudaDevice<>;

TEST_F(CudaPartitionedConvolution2d, BatchOneMatchesWithEveryOverlapPolicy) {
  const auto whole = cubic_convolution(2, 30, 3, 4, 3, 1);
  auto exchange = in_process_halo_exchange(gpu(), 6);
  for (const auto overlap : {HaloOverlap::automatic, HaloOverlap::always, HaloOverlap::never}) {
    const auto errors = check_partitioned_convolution(*exchange, whole, {3, 2}, 1, 5, overlap);
    EXPECT_LE(errors.output, kCudaPartitionedTolerance);
    EXPECT_LE(errors.input_gradient, kCudaPartitionedTolerance);
    EXPECT_LE(errors.filter_gradient, kCudaPartitionedTolerance);
  }
}

struct PoolingCase {
  std::vector<std::int64_t> grid;
  bool max = true;
  std::int64_t kernel = 3;
  std::int64_t stride = 2;
  std::int64_t padding = 1;
};

std::ostream& operator<<(std::ostream& out, const PoolingCase& c) {
  return out << (c.max ? "max " : "average ") << c.kernel << "/" << c.stride << "/" << c.padding
             << ", grid " << grid_name(c.grid);
}

// partitioned_pooling_test's cases: windows overlapping (3/2/1) and not (2/2/0).
std::vector<PoolingCase> pooling_cases() {
  std::vector<PoolingCase> cases;
  for (const auto& grid : partition_grids()) {
    for (bool max : {true, false}) {
      cases.push_back({grid, max, 3, 2, 1});
      cases.push_back({grid, max, 2, 2, 0});
    }
  }
  return cases;
}

using CudaPartitionedPooling = testing::WithCudaDevice<::testing::TestWithParam<PoolingCase>>;

TEST_P(CudaPartitionedPooling, MatchesUnpartitionedForwardAndBackward) {
  const PoolingCase& c = GetParam();
  const auto whole = cubic_pooling(3, 16, 3, c.max, c.kernel, c.stride, c.padding);
  auto exchange = in_process_halo_exchange(gpu(), shards_of(c.grid));
  const auto errors = check_partitioned_pooling(*exchange, whole, c.grid, 2, 29);
  // Pooling picks or averages the same few values on both sides: float rounding only.
  EXPECT_LE(errors.output, 1e-5);
  EXPECT_LE(errors.input_gradient, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Grids, CudaPartitionedPooling, ::testing::ValuesIn(pooling_cases()),
                         [](const ::testing::TestParamInfo<PoolingCase>& case_info) {
                           const PoolingCase& c = case_info.param;
                           return std::string(c.max ? "max" : "avg") + std::to_string(c.kernel) +
                                  std::to_string(c.stride) + std::to_string(c.padding) + "_grid" +
                                  grid_name(c.grid);
                         });

}  // namespace
}  // namespace tessera::kernels
