// Spatially partitioned max and average pooling (3/2/1 as in CosmoFlow, 2/2/0 as in U-Net)
// against the unpartitioned kernels, in one process, over the same grids as the convolution.
#include <gtest/gtest.h>

#include <ostream>

#include "partitioned_test_support.hpp"

namespace tessera::kernels {
namespace {

using testing::check_partitioned_pooling;
using testing::cpu_device;
using testing::cubic_pooling;
using testing::grid_name;

constexpr double kPoolingTolerance = 1e-5;

struct PartitionedPoolingCase {
  std::vector<std::int64_t> grid;
  bool max = true;
  std::int64_t kernel = 3;
  std::int64_t stride = 2;
  std::int64_t padding = 1;
};

std::ostream& operator<<(std::ostream& out, const PartitionedPoolingCase& c) {
  return out << (c.max ? "max " : "average ") << c.kernel << "/" << c.stride << "/" << c.padding
             << ", grid " << grid_name(c.grid);
}

std::vector<PartitionedPoolingCase> partitioned_pooling_cases() {
  std::vector<PartitionedPoolingCase> cases;
  for (const auto& grid : testing::partition_grids()) {
    for (bool max : {true, false}) {
      cases.push_back({grid, max, 3, 2, 1});
      cases.push_back({grid, max, 2, 2, 0});
    }
  }
  return cases;
}

class PartitionedPoolingTest : public ::testing::TestWithParam<PartitionedPoolingCase> {};

TEST_P(PartitionedPoolingTest, MatchesUnpartitionedForwardAndBackward) {
  const PartitionedPoolingCase& c = GetParam();
  const auto whole = cubic_pooling(3, 16, 3, c.max, c.kernel, c.stride, c.padding);
  std::int64_t shards = 1;
  for (std::int64_t parts : c.grid) shards *= parts;
  auto exchange = in_process_halo_exchange(cpu_device(), shards);
  const auto errors = check_partitioned_pooling(*exchange, whole, c.grid, 2, 29);
  EXPECT_LE(errors.output, kPoolingTolerance);
  EXPECT_LE(errors.input_gradient, kPoolingTolerance);
}

INSTANTIATE_TEST_SUITE_P(Grids, PartitionedPoolingTest,
                         ::testing::ValuesIn(partitioned_pooling_cases()),
                         [](const ::testing::TestParamInfo<PartitionedPoolingCase>& case_info) {
                           const PartitionedPoolingCase& c = case_info.param;
                           return std::string(c.max ? "max" : "avg") + std::to_string(c.kernel) +
                                  std::to_string(c.stride) + std::to_string(c.padding) + "_grid" +
                                  grid_name(c.grid);
                         });

}  // namespace
}  // namespace tessera::kernels
