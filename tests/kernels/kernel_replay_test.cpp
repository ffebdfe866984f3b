// The load a profiling rank keeps up while the others measure: a kernel at its whole batch with
// the fastest algorithm the profile holds for it.
#include "tessera/kernels/profile/kernel_replay.hpp"

#include <gtest/gtest.h>

#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/profile/kernel_profiler.hpp"

namespace tessera::kernels {
namespace {

KernelToProfile conv1_forward() {
  for (const auto& kernel : kernels_to_profile(load_scenario(
           std::string(TESSERA_TEST_DATA_DIR) + "/scenarios/good/profile_small_cnn.yaml"))) {
    if (kernel.layer.name == "conv1" && kernel.direction == Direction::forward) return kernel;
  }
  throw std::logic_error("profile_small_cnn.yaml has no conv1");
}

ProfileEntry row_of(const Device& device, const KernelToProfile& kernel, std::string algorithm,
                    bool ok) {
  return {.device = device.info().name,
          .op = kernel.op,
          .direction = kernel.direction,
          .shape = kernel.shape,
          .dtype = kernel.dtype,
          .micro_batch = kernel.batch,
          .algorithm = std::move(algorithm),
          .time_seconds = 1e-3,
          .ok = ok};
}

TEST(KernelReplay, RunsTheKernelOnceTheProfileHoldsASuccessfulRow) {
  auto device = open_cpu_device();
  const KernelToProfile kernel = conv1_forward();
  ProfilerOptions options;
  options.min_runs = options.max_runs = 1;
  options.seconds_per_measurement = 0;
  options.skipped_algorithm_prefixes = {"ref:"};
  ProfileDatabase profiles;
  EXPECT_EQ(KernelReplay::of(*device, kernel, profiles), nullptr);
  profile_kernels(*device, {kernel}, options, profiles);
  auto replay = KernelReplay::of(*device, kernel, profiles);
  ASSERT_NE(replay, nullptr);
  replay->run_once();
  replay->run_once();
}

TEST(KernelReplay, NeedsAnAlgorithmThatRanAndThatTheDeviceOffers) {
  auto device = open_cpu_device();
  const KernelToProfile kernel = conv1_forward();
  ProfileDatabase failed;
  failed.add(row_of(*device, kernel, "x64:gemm:jit", false));
  EXPECT_EQ(KernelReplay::of(*device, kernel, failed), nullptr);
  ProfileDatabase unknown;
  unknown.add(row_of(*device, kernel, "no such algorithm", true));
  EXPECT_EQ(KernelReplay::of(*device, kernel, unknown), nullptr);
}

}  // namespace
}  // namespace tessera::kernels
