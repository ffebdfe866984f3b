// profile_coverage: a row counts when the cost model would look it up for one of the scenario's
// kernels or its optimizer update; transfers are apart; the rest is listed by file and line.
#include <gtest/gtest.h>

#include <string>

#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/point/profile_coverage.hpp"
#include "tessera/core/point/profile_plan.hpp"

namespace tessera {
namespace {

const std::string kCoverageScenario =
    TESSERA_TEST_DATA_DIR "/scenarios/good/profile_small_cnn.yaml";  // power_of_two, batch 4

ProfileEntry entry_for(const KernelToProfile& kernel, const std::string& device,
                       std::int64_t micro_batch, int line) {
  return {.device = device,
          .op = kernel.op,
          .direction = kernel.direction,
          .shape = kernel.shape,
          .dtype = kernel.dtype,
          .micro_batch = micro_batch,
          .algorithm = "default",
          .time_seconds = 1e-4,
          .where = {"p.csv", line, 1}};
}

TEST(ProfileCoverage, CountsWhatTheCostModelWouldLookUp) {
  const auto loaded = load_scenario(kCoverageScenario);
  const auto kernels = kernels_to_profile(loaded);
  const auto updates = parameter_kernels_to_profile(loaded);
  ASSERT_FALSE(kernels.empty());
  ASSERT_EQ(updates.size(), 1u);
  const auto& conv = kernels.front();  // conv1 forward, micro-batches 1, 2, 4
  ASSERT_EQ(conv.op, "conv");
  const std::string gpu = loaded.cluster.gpu.model;
  ProfileDatabase profiles;
  profiles.add(entry_for(conv, gpu, 1, 9));
  profiles.add(entry_for(conv, gpu, 4, 10));
  profiles.add(entry_for(conv, gpu, 3, 8));          // no power of two: never looked up
  profiles.add(entry_for(conv, "other-gpu", 4, 7));  // another device
  profiles.add({.device = gpu,
                .op = updates[0].op,
                .shape = updates[0].shape,
                .algorithm = "default",
                .where = {"p.csv", 11, 1}});
  profiles.add({.device = gpu, .op = "copy_d2d", .shape = "bytes 4000", .algorithm = "default"});

  const auto coverage = profile_coverage(profiles, loaded);
  EXPECT_EQ(coverage.device, gpu);
  EXPECT_EQ(coverage.rows, 6u);
  EXPECT_EQ(coverage.matching_rows, 3u);
  EXPECT_EQ(coverage.machine_rows, 1u);
  ASSERT_EQ(coverage.unmatched.size(), 2u);
  EXPECT_EQ(coverage.unmatched[0].where.line, 7);  // by file and line
  EXPECT_EQ(coverage.unmatched[1].where.line, 8);
  EXPECT_EQ(coverage.kernels, kernels.size() + updates.size());
  EXPECT_EQ(coverage.measured_kernels, 2u);  // conv1 forward and the update
  EXPECT_EQ(coverage.devices.size(), 2u);
}

TEST(ProfileCoverage, AnotherDtypeOrBatchMatchesNothing) {
  const auto loaded = load_scenario(kCoverageScenario);
  auto relu = kernels_to_profile(loaded).at(6);  // relu1 forward, batch 4
  ASSERT_EQ(relu.op, "relu");
  const std::string gpu = loaded.cluster.gpu.model;
  ProfileDatabase profiles;
  profiles.add(entry_for(relu, gpu, 4, 1));
  profiles.add(entry_for(relu, gpu, 2, 2));  // only convolutions are micro-batched
  relu.dtype = DType::float16;
  profiles.add(entry_for(relu, gpu, 4, 3));
  const auto coverage = profile_coverage(profiles, loaded);
  EXPECT_EQ(coverage.matching_rows, 1u);
  EXPECT_EQ(coverage.unmatched.size(), 2u);
}

}  // namespace
}  // namespace tessera
