// The real backend's Trainer on one rank: CosmoFlow learns the synthetic data set (loss falls).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "../kernels/real_training_support.hpp"
#include "../kernels_mpi/mpi_world.hpp"
#include "tessera/core/model/model_file.hpp"
#include "tessera/kernels/real/model_step_check.hpp"

namespace tessera::kernels {
namespace {

double mean(const std::vector<double>& values, std::size_t first, std::size_t count) {
  return std::accumulate(values.begin() + static_cast<std::ptrdiff_t>(first),
                         values.begin() + static_cast<std::ptrdiff_t>(first + count), 0.0) /
         static_cast<double>(count);
}

using testing::world;

TEST(RealTrainer, CosmoFlowLossFallsOnTheSyntheticDataSet) {
  testing::TrainingCase c;
  c.config.mini_batch = 4;
  c.steps = 16;
  c.dataset_samples = 8;
  c.learning_rate = 1e-4F;
  const auto run = testing::train_cosmoflow(world(), c);
  for (double loss : run.losses) EXPECT_TRUE(std::isfinite(loss));
  // An epoch is 2 steps (8 samples, 4 a step); the last epoch's loss against the first's (0.40
  // -> 0.18 when written; predicting the targets' mean gives 1/3).
  EXPECT_LT(mean(run.losses, 14, 2), 0.6 * mean(run.losses, 0, 2));
}

// Every model family learns its synthetic task: classification (labels drawn per sample, the
// input carrying a pattern of its label), segmentation (each voxel's label an interval of its
// value), CosmoFlow's regression and the sequence models' tokens (each step's label a function
// of its token and the one before), and a batch-norm on the input itself. The last epoch's loss
// against the first's.
class FamilyLearns : public ::testing::TestWithParam<std::pair<std::string, int>> {};

TEST_P(FamilyLearns, LossFallsOnItsSyntheticTask) {
  const auto& [file, steps] = GetParam();
  const auto model =
      load_model_file(std::string(TESSERA_TEST_DATA_DIR) + "/models/families/" + file + ".yaml");
  testing::TrainingCase c;
  c.config.mini_batch = 4;
  c.steps = steps;
  c.dataset_samples = 8;  // an epoch is 2 steps
  c.learning_rate = 1e-2F;
  const auto run = testing::train_model(world(), model, c);
  for (double loss : run.losses) EXPECT_TRUE(std::isfinite(loss));
  std::string losses;
  for (double loss : run.losses) losses += std::to_string(loss) + " ";
  EXPECT_LT(mean(run.losses, static_cast<std::size_t>(steps - 2), 2), 0.8 * mean(run.losses, 0, 2))
      << file << ": " << losses;
}

INSTANTIATE_TEST_SUITE_P(Families, FamilyLearns,
                         ::testing::Values(std::pair<std::string, int>{"narrow_resnet", 20},
                                           std::pair<std::string, int>{"small_vgg", 20},
                                           std::pair<std::string, int>{"input_bn_cnn", 20},
                                           std::pair<std::string, int>{"inception_blocks", 20},
                                           std::pair<std::string, int>{"small_unet3d", 20},
                                           std::pair<std::string, int>{"gelu_cnn", 20},
                                           std::pair<std::string, int>{"small_lstm", 100},
                                           std::pair<std::string, int>{"sampled_lstm", 100},
                                           std::pair<std::string, int>{"tiny_gnmt", 100},
                                           std::pair<std::string, int>{"small_transformer", 100}),
                         [](const auto& param) { return param.param.first; });

// tessera model-check keeps every ReLU's output as the forward pass left it: the model's ReLUs
// in order, N x the output of a sample each, none negative, about half of them cut.
TEST(ModelStepCheck, KeepsEveryReluOutputAsTheForwardPassLeftIt) {
  const auto model = testing::tiny_gpt_or_family("bn_cnn");
  auto device = open_cpu_device();
  const auto check = real::check_model_step(model, 3, *device, world(), 5);
  ASSERT_EQ(check.kinks.size(), 3U);
  for (std::size_t k = 0; k < check.kinks.size(); ++k) {
    const auto& kink = check.kinks[k];
    EXPECT_EQ(kink.layer, "relu" + std::to_string(k + 1));
    const auto& shape = model.layers()[model.index_of(kink.layer).value()].output_shape;
    EXPECT_EQ(static_cast<std::int64_t>(kink.values.size()),
              3 * shape.c * shape.spatial_elements());
    const auto zeros = std::count(kink.values.begin(), kink.values.end(), 0.0F);
    EXPECT_TRUE(
        std::all_of(kink.values.begin(), kink.values.end(), [](float v) { return v >= 0; }));
    // Batch-norm's outputs are centred per channel: about half are cut.
    EXPECT_GT(zeros, static_cast<std::ptrdiff_t>(kink.values.size() / 4)) << kink.layer;
    EXPECT_LT(zeros, static_cast<std::ptrdiff_t>(3 * kink.values.size() / 4)) << kink.layer;
  }
}

// Every layer's forward and backward and the update are timed, and they make up the compute.
TEST(RealTrainer, ReportsTheComputeTimeOfEveryLayerAndPass) {
  testing::TrainingCase c;
  c.config.mini_batch = 2;
  c.steps = 1;
  const auto run = testing::train_cosmoflow(world(), c);
  const auto& times = run.last_step.layer_compute;
  const auto model = build_zoo_model("cosmoflow", {{"width", "16"}, {"batch_norm", "false"}});
  const std::size_t layers = model.layers().size();
  ASSERT_EQ(times.size(), 2 * layers + 1);
  double total = 0;
  for (std::size_t i = 0; i < layers; ++i) {
    EXPECT_EQ(times[i].layer, model.layers()[i].layer.name);
    EXPECT_EQ(times[i].pass, "forward");
    EXPECT_EQ(times[layers + i].layer, model.layers()[i].layer.name);
    EXPECT_EQ(times[layers + i].pass, "backward");
  }
  for (const auto& time : times) {
    EXPECT_GE(time.seconds, 0) << time.layer << " " << time.pass;
    total += time.seconds;
  }
  EXPECT_EQ(times.back().layer, "optimizer");
  EXPECT_GT(times.back().seconds, 0);
  const auto conv1 = *model.index_of("conv1");
  EXPECT_GT(times[conv1].seconds, 0);
  EXPECT_GT(times[layers + conv1].seconds, 0);
  EXPECT_NEAR(total, run.last_step.breakdown.compute_seconds,
              1e-9 + 1e-9 * run.last_step.breakdown.compute_seconds);
}

// The trainer plays the step program: what it executed, recorded where the work happened, is
// the program's ops in order, and every program op took time in the breakdown's category.
TEST(RealTrainer, ExecutesTheStepProgramsOpsInOrder) {
  testing::TrainingCase c;
  c.config.mini_batch = 2;
  c.batch_norm = true;
  c.steps = 1;
  const auto run = testing::train_cosmoflow(world(), c);
  ASSERT_FALSE(run.program.ops.empty());
  EXPECT_EQ(run.last_step.executed, testing::expected_executions(run.program));
  // One timeline event per op on the compute track, labelled as the program labels it, but for
  // the memory plan's allocations and releases (bookkeeping, no span of their own).
  std::vector<std::string> spans;
  for (const auto& op : run.program.ops) {
    if (op.kind != StepOpKind::allocate && op.kind != StepOpKind::release) {
      spans.push_back(op.label);
    }
  }
  std::size_t compute_track = 0;
  for (const auto& event : run.last_step.timeline) {
    if (event.track != TimelineTrack::compute) continue;
    ASSERT_LT(compute_track, spans.size());
    EXPECT_EQ(event.name, spans[compute_track]);
    EXPECT_EQ(event.source, Provenance::measured);
    EXPECT_LE(event.start_seconds, event.end_seconds);
    ++compute_track;
  }
  EXPECT_EQ(compute_track, spans.size());
  // The memory in use over the step: the whole run's tensors, then the layers' coming and going.
  EXPECT_GT(run.last_step.memory.peak_bytes(), run.last_step.memory.average_bytes());
  EXPECT_GT(run.last_step.memory.average_bytes(), 0);
}

// The unsplit convolutions run the micro-batching plan: two micro-batches per kernel give the
// undivided run's losses and weights up to float32 rounding.
TEST(RealTrainer, MicroBatchedConvolutionsTrainLikeUndividedOnes) {
  testing::TrainingCase c;
  c.config.mini_batch = 2;
  c.steps = 2;
  c.optimizer = Optimizer::momentum;
  const auto undivided = testing::train_cosmoflow(world(), c);
  c.halve_micro_batches = true;
  const auto micro_batched = testing::train_cosmoflow(world(), c);
  for (std::size_t step = 0; step < undivided.losses.size(); ++step) {
    EXPECT_NEAR(micro_batched.losses[step], undivided.losses[step], 1e-5) << "step " << step;
  }
  testing::WeightGap gap;
  gap.add(micro_batched.parameters, undivided.parameters);
  EXPECT_LE(gap.largest_difference, 1e-5 * gap.largest_weight);
  EXPECT_NE(undivided.losses.front(), undivided.losses.back());
}

}  // namespace
}  // namespace tessera::kernels
