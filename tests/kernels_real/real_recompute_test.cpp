// Activation recomputation executed: each segment's inner feature maps are released after its
// forward and made again by running the segment's forward once more before its backward, as the
// step program says. The kernels are the same and run on the same inputs, so training with it
// gives the very losses and weights of training without it, while the trainer holds less.
#include <gtest/gtest.h>

#include <string>

#include "../kernels/real_training_support.hpp"
#include "../kernels_mpi/mpi_world.hpp"
#include "tessera/core/model/model_file.hpp"

namespace tessera::kernels {
namespace {

using testing::world;

ModelGraph family(const std::string& name) {
  return load_model_file(std::string(TESSERA_TEST_DATA_DIR) + "/models/families/" + name + ".yaml");
}

testing::TrainingCase recompute_case(RecomputePolicy recompute) {
  testing::TrainingCase c;
  c.config.mini_batch = 4;
  c.steps = 2;
  c.optimizer = Optimizer::momentum;
  c.recompute = recompute;
  return c;
}

std::size_t recomputed_ops(const StepProgram& program) {
  std::size_t count = 0;
  for (const auto& op : program.ops) count += op.recomputed ? 1 : 0;
  return count;
}

class RealRecompute : public ::testing::TestWithParam<std::string> {};

TEST_P(RealRecompute, TrainsBitIdenticallyToKeepingEveryFeatureMap) {
  const auto model = family(GetParam());
  const auto kept = testing::train_model(world(), model, recompute_case(RecomputePolicy::none));
  const auto remade = testing::train_model(world(), model, recompute_case(RecomputePolicy::full));
  ASSERT_GT(recomputed_ops(remade.program), 0U) << "no segment of " << GetParam() << " recomputed";
  EXPECT_EQ(recomputed_ops(kept.program), 0U);
  EXPECT_EQ(remade.losses, kept.losses);
  EXPECT_EQ(remade.parameters, kept.parameters);
  EXPECT_NE(remade.losses.front(), remade.losses.back()) << "the weights did not move";
  // The second forward is the program's: executed where it says.
  EXPECT_EQ(remade.last_step.executed, testing::expected_executions(remade.program));
  EXPECT_LT(remade.peak_bytes, kept.peak_bytes);
}

INSTANTIATE_TEST_SUITE_P(Families, RealRecompute,
                         ::testing::Values("small_transformer", "narrow_resnet"));

}  // namespace
}  // namespace tessera::kernels
