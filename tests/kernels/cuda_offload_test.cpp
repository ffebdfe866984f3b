// vDNN executed on a GPU: training with any policy gives the very losses and weights of training
// without it (tests/kernels_real/real_offload_test.cpp says the same of the CPU).
#include <gtest/gtest.h>

#include "../kernels_mpi/mpi_world.hpp"
#include "cuda_test_support.hpp"
#include "offload_training_case.hpp"

namespace tessera::kernels {
namespace {

using testing::blocks_case;
using testing::deep_blocks;
using testing::world;

// Pinned host memory and the copy stream (skipped where there is no GPU).
// Bit-identical needs reductions in a fixed order: on an H100 on 2026-11-26 the weights agreed to
// the bit but the losses did not (the loss kernel then summed its blocks atomically), and cuDNN's
// atomic backward algorithms would break the weights' bits too, so the runs keep deterministic
// algorithms only.
class CudaOffload : public testing::WithCudaDevice<> {};

TEST_F(CudaOffload, EveryPolicyTrainsBitIdenticallyToNoOffloading) {
  const auto model = deep_blocks();
  auto kept_case = blocks_case(OffloadPolicy::none);
  kept_case.device = &gpu();
  kept_case.deterministic = true;
  const auto kept = testing::train_model(world(), model, kept_case);
  const auto again = testing::train_model(world(), model, kept_case);
  ASSERT_EQ(again.parameters, kept.parameters) << "deterministic training is not reproducible";
  for (auto policy : {OffloadPolicy::conv, OffloadPolicy::all}) {
    auto moved_case = blocks_case(policy);
    moved_case.device = &gpu();
    moved_case.deterministic = true;
    const auto moved = testing::train_model(world(), model, moved_case);
    EXPECT_EQ(moved.losses, kept.losses) << to_string(policy);
    EXPECT_EQ(moved.parameters, kept.parameters) << to_string(policy);
    EXPECT_GT(moved.last_step.offloaded_bytes, 0) << to_string(policy);
  }
}

}  // namespace
}  // namespace tessera::kernels
