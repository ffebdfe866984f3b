// vDNN executed: feature maps copied to host memory in forward and back in backward, layer by
// layer, with real copies. Training with any policy gives the very losses and weights of training
// without it (same kernels, same order), the memory the trainer holds drops, and a device too
// small for the run without offloading holds it with offloading. (The GPU's test:
// tests/kernels/cuda_offload_test.cpp.)
#include <gtest/gtest.h>

#include "../kernels/offload_training_case.hpp"
#include "../kernels_mpi/mpi_world.hpp"
#include "cpu/cpu_device.hpp"
#include "tessera/core/strategy/memory_plan.hpp"

namespace tessera::kernels {
namespace {

using testing::blocks_case;
using testing::deep_blocks;
using testing::world;

TEST(RealOffload, EveryPolicyTrainsBitIdenticallyToNoOffloading) {
  const auto model = deep_blocks();
  const auto kept = testing::train_model(world(), model, blocks_case(OffloadPolicy::none));
  EXPECT_EQ(kept.last_step.offloaded_bytes, 0);
  for (auto policy : {OffloadPolicy::conv, OffloadPolicy::all}) {
    const auto moved = testing::train_model(world(), model, blocks_case(policy));
    EXPECT_EQ(moved.losses, kept.losses) << to_string(policy);
    EXPECT_EQ(moved.parameters, kept.parameters) << to_string(policy);
    EXPECT_GT(moved.last_step.offloaded_bytes, 0) << to_string(policy);
    // The copies are the program's: executed in its order, waited for as it says.
    EXPECT_EQ(moved.last_step.executed, testing::expected_executions(moved.program));
  }
}

TEST(RealOffload, TheTrainerHoldsLessWhenItOffloads) {
  const auto model = deep_blocks();
  const auto kept = testing::train_model(world(), model, blocks_case(OffloadPolicy::none));
  const auto moved = testing::train_model(world(), model, blocks_case(OffloadPolicy::all));
  EXPECT_LT(moved.peak_bytes, kept.peak_bytes);
  // The time average weighs each level by how long ops took, which a busy machine changes; the
  // levels themselves, one per allocation or release, follow the program.
  const auto mean_level = [](const MemoryTimeline& memory) {
    const auto levels = memory.samples(0);
    double sum = 0;
    for (const auto& level : levels) sum += level.bytes;
    return sum / static_cast<double>(levels.size());
  };
  EXPECT_LT(mean_level(moved.last_step.memory), mean_level(kept.last_step.memory));
  // The copies took time on the memory stream's track.
  bool copies = false;
  for (const auto& event : moved.last_step.timeline) {
    copies |= event.track == TimelineTrack::memory_copies;
  }
  EXPECT_TRUE(copies);
}

TEST(RealOffload, ADeviceTooSmallWithoutOffloadingTrainsWithIt) {
  const auto model = deep_blocks();
  const auto kept = testing::train_model(world(), model, blocks_case(OffloadPolicy::none));
  const auto moved = testing::train_model(world(), model, blocks_case(OffloadPolicy::all));
  ASSERT_LT(moved.peak_bytes, kept.peak_bytes);
  // A device that holds the offloading run's peak but not the other's.
  CpuDevice capped((moved.peak_bytes + kept.peak_bytes) / 2);
  auto without = blocks_case(OffloadPolicy::none);
  without.device = &capped;
  EXPECT_THROW(testing::train_model(world(), model, without), OutOfDeviceMemory);
  auto with = blocks_case(OffloadPolicy::all);
  with.device = &capped;
  const auto fitted = testing::train_model(world(), model, with);
  EXPECT_EQ(fitted.parameters, kept.parameters);
  EXPECT_LE(fitted.peak_bytes, (moved.peak_bytes + kept.peak_bytes) / 2);
}

}  // namespace
}  // namespace tessera::kernels
