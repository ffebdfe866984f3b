// Partitioned convolution and pooling with one shard per MPI rank, against the unpartitioned
// kernels computed on every rank: depth split over all ranks, and 2x2 over H and W with 4 ranks.
#include <gtest/gtest.h>

#include <ostream>

#include "../kernels/partitioned_test_support.hpp"
#include "mpi_world.hpp"

namespace tessera::kernels {
namespace {

using testing::cpu_device;
using testing::world;

constexpr double kPartitionedTolerance = 1e-5;
// 8^3 voxels, batch 1: every rank also computes the whole reference, and 4 ranks share 2 cores
// (under AddressSanitizer too). 8 planes over 4 ranks still need halos from both sides.
constexpr std::int64_t volume_extent = 8;

enum class GridSplit { depth, height_width };

std::vector<std::int64_t> grid_for(GridSplit split) {
  if (split == GridSplit::depth) return {world().size(), 1, 1};
  return {1, 2, 2};
}

struct ConvolutionCase {
  GridSplit split = GridSplit::depth;
  std::int64_t kernel = 3;
  std::int64_t stride = 1;
  HaloOverlap overlap = HaloOverlap::always;
};

std::ostream& operator<<(std::ostream& out, const ConvolutionCase& c) {
  return out << (c.split == GridSplit::depth ? "depth" : "2x2 in H, W") << ", kernel " << c.kernel
             << ", stride " << c.stride
             << (c.overlap == HaloOverlap::always ? ", interior during the exchange" : "");
}

class PartitionedConvolutionOverMpi : public ::testing::TestWithParam<ConvolutionCase> {};

TEST_P(PartitionedConvolutionOverMpi, MatchesUnpartitioned) {
  const ConvolutionCase& c = GetParam();
  if (c.split == GridSplit::height_width && world().size() != 4) GTEST_SKIP() << "needs 4 ranks";
  auto exchange = communicator_halo_exchange(cpu_device(), world());
  const auto whole = testing::cubic_convolution(3, volume_extent, 2, 3, c.kernel, c.stride);
  const auto errors =
      testing::check_partitioned_convolution(*exchange, whole, grid_for(c.split), 1, 41, c.overlap);
  EXPECT_LE(errors.output, kPartitionedTolerance) << "rank " << world().rank();
  EXPECT_LE(errors.input_gradient, kPartitionedTolerance) << "rank " << world().rank();
  EXPECT_LE(errors.filter_gradient, kPartitionedTolerance) << "rank " << world().rank();
}

std::vector<ConvolutionCase> convolution_cases() {
  std::vector<ConvolutionCase> cases;
  for (GridSplit split : {GridSplit::depth, GridSplit::height_width}) {
    for (std::int64_t kernel : {1, 3, 5}) {
      for (std::int64_t stride : {1, 2}) {
        for (const auto overlap : {HaloOverlap::always, HaloOverlap::never}) {
          cases.push_back({split, kernel, stride, overlap});
        }
      }
    }
  }
  return cases;
}

std::string case_name(GridSplit split, const std::string& rest) {
  return std::string(split == GridSplit::depth ? "depth" : "height_width") + "_" + rest;
}

INSTANTIATE_TEST_SUITE_P(Splits, PartitionedConvolutionOverMpi,
                         ::testing::ValuesIn(convolution_cases()),
                         [](const ::testing::TestParamInfo<ConvolutionCase>& case_info) {
                           return case_name(case_info.param.split,
                                            "k" + std::to_string(case_info.param.kernel) + "_s" +
                                                std::to_string(case_info.param.stride) +
                                                (case_info.param.overlap == HaloOverlap::always
                                                     ? "_overlapped"
                                                     : "_sequential"));
                         });

struct PoolingCase {
  GridSplit split = GridSplit::depth;
  bool max = true;
  std::int64_t kernel = 3;
  std::int64_t stride = 2;
  std::int64_t padding = 1;
};

std::ostream& operator<<(std::ostream& out, const PoolingCase& c) {
  return out << (c.split == GridSplit::depth ? "depth" : "2x2 in H, W")
             << (c.max ? ", max " : ", average ") << c.kernel << "/" << c.stride << "/"
             << c.padding;
}

class PartitionedPoolingOverMpi : public ::testing::TestWithParam<PoolingCase> {};

TEST_P(PartitionedPoolingOverMpi, MatchesUnpartitioned) {
  const PoolingCase& c = GetParam();
  if (c.split == GridSplit::height_width && world().size() != 4) GTEST_SKIP() << "needs 4 ranks";
  auto exchange = communicator_halo_exchange(cpu_device(), world());
  const auto whole =
      testing::cubic_pooling(3, volume_extent, 3, c.max, c.kernel, c.stride, c.padding);
  const auto errors =
      testing::check_partitioned_pooling(*exchange, whole, grid_for(c.split), 1, 43);
  EXPECT_LE(errors.output, kPartitionedTolerance) << "rank " << world().rank();
  EXPECT_LE(errors.input_gradient, kPartitionedTolerance) << "rank " << world().rank();
}

std::vector<PoolingCase> pooling_cases() {
  std::vector<PoolingCase> cases;
  for (GridSplit split : {GridSplit::depth, GridSplit::height_width}) {
    for (bool max : {true, false}) {
      cases.push_back({split, max, 3, 2, 1});
      cases.push_back({split, max, 2, 2, 0});
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Splits, PartitionedPoolingOverMpi, ::testing::ValuesIn(pooling_cases()),
                         [](const ::testing::TestParamInfo<PoolingCase>& case_info) {
                           const PoolingCase& c = case_info.param;
                           return case_name(c.split, std::string(c.max ? "max" : "avg") +
                                                         std::to_string(c.kernel) +
                                                         std::to_string(c.stride) +
                                                         std::to_string(c.padding));
                         });

}  // namespace
}  // namespace tessera::kernels
