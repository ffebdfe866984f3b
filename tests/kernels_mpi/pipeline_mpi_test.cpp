// Model parallelism on the real backend is exact: a model split into stages over the ranks of a
// replica (contiguous stages, or branches placed on another stage), its mini-batch pipelined as
// micro-batches (GPipe or 1F1B), with data parallelism over the remaining ranks, gives after two
// momentum steps the losses and weights of one rank training the same samples alone, within
// float32 rounding. The one rank runs the same micro-batches (each replica's micro-batches one
// after another), so that batch-norm statistics cover the same samples. Every rank executes its
// stage's step program op by op, its sends and receives included.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "../kernels/real_training_support.hpp"
#include "mpi_world.hpp"
#include "tessera/core/model/model_file.hpp"

namespace tessera::kernels {
namespace {

using testing::world;

struct PipelineCase {
  std::string name;
  std::string model;  // "gpt2" (the zoo's, tiny), or a file of tests/data/models/families
  std::int64_t stages = 2;
  std::int64_t micro_batches = 1;
  PipelineSchedule schedule = PipelineSchedule::gpipe;
  StagePlacement placement;
  std::int64_t mini_batch = 4;
  RecomputePolicy recompute = RecomputePolicy::none;  // the one rank keeps every feature map
};

std::ostream& operator<<(std::ostream& out, const PipelineCase& c) {
  return out << c.name;
}

class PipelineOverMpi : public ::testing::TestWithParam<PipelineCase> {};

TEST_P(PipelineOverMpi, MatchesOneRankWithTheSameMicroBatches) {
  const PipelineCase& c = GetParam();
  const auto ranks = static_cast<std::int64_t>(world().size());
  if (ranks % c.stages != 0) GTEST_SKIP() << c.stages << " stages need a multiple of ranks";
  const auto model = testing::tiny_gpt_or_family(c.model);
  testing::TrainingCase parallel;
  parallel.optimizer = Optimizer::momentum;  // linear in the gradients: rounding stays small
  parallel.steps = 2;                        // the second step starts from the first's momentum
  parallel.dataset_samples = 16;
  parallel.placement = c.placement;
  parallel.config.data = ranks / c.stages;
  parallel.config.model_degree = c.stages;
  parallel.config.mini_batch = c.mini_batch;
  parallel.config.micro_batches = c.micro_batches;
  parallel.config.schedule = c.schedule;
  parallel.recompute = c.recompute;
  testing::TrainingCase alone = parallel;
  alone.placement = {};
  alone.recompute = RecomputePolicy::none;
  alone.config.data = 1;
  alone.config.model_degree = 1;
  alone.config.mini_batch = parallel.config.global_batch();
  alone.config.micro_batches = parallel.config.data * c.micro_batches;
  alone.config.schedule = PipelineSchedule::gpipe;

  auto own = world().split(world().rank(), 0);
  const auto reference = testing::train_model(*own, model, alone);
  const auto run = testing::train_model(world(), model, parallel);

  testing::expect_losses_match(run, reference, world().rank());
  // The layers of this rank's stage hold the one rank's weights (a tied table's copy its
  // owner's); the others none.
  ASSERT_EQ(run.layer_parameters.size(), reference.layer_parameters.size());
  testing::WeightGap gap;
  std::size_t layers_here = 0;
  for (std::size_t i = 0; i < run.layer_parameters.size(); ++i) {
    const auto& mine = run.layer_parameters[i];
    const auto theirs = testing::reference_parameters(reference, i, run.parameter_origins.at(i));
    if (mine.empty()) continue;
    ++layers_here;
    ASSERT_EQ(mine.size(), theirs.size()) << model.layers()[i].layer.name;
    gap.add(mine, theirs);
  }
  EXPECT_GT(layers_here, 0U) << "rank " << world().rank() << " holds no layer with parameters";
  EXPECT_LE(gap.largest_difference, 1e-5 * gap.largest_weight) << "rank " << world().rank();
  EXPECT_NE(run.losses.front(), run.losses.back());  // the weights moved
  EXPECT_EQ(run.last_step.executed, testing::expected_executions(run.program))
      << "rank " << world().rank();
  // The stages talked: every rank's program sends and receives.
  const auto& ops = run.program.ops;
  EXPECT_TRUE(std::any_of(ops.begin(), ops.end(),
                          [](const StepOp& op) { return op.kind == StepOpKind::stage_recv; }));
}

INSTANTIATE_TEST_SUITE_P(
    Stages, PipelineOverMpi,
    ::testing::Values(
        PipelineCase{.name = "ResNet, 2 stages, the residual crossing them, one micro-batch",
                     .model = "narrow_resnet",
                     .placement = StagePlacement{"b1_conv2"}},
        PipelineCase{.name = "ResNet, 2 stages, GPipe over 2 micro-batches",
                     .model = "narrow_resnet",
                     .micro_batches = 2,
                     .placement = StagePlacement{"b1_conv2"}},
        PipelineCase{.name = "ResNet, 2 balanced stages, 1F1B over 4 micro-batches",
                     .model = "narrow_resnet",
                     .micro_batches = 4,
                     .schedule = PipelineSchedule::one_f_one_b},
        PipelineCase{.name = "ResNet, 4 stages, 1F1B over 4 micro-batches",
                     .model = "narrow_resnet",
                     .stages = 4,
                     .micro_batches = 4,
                     .schedule = PipelineSchedule::one_f_one_b,
                     .placement = StagePlacement{"b1_conv1", "b1_add", "b2_conv2"}},
        PipelineCase{.name = "Inception, two branches on the second stage",
                     .model = "inception_blocks",
                     .placement = StagePlacement::of_layers({{"a_3x3_reduce", 1}, {"a_pool", 1}})},
        PipelineCase{.name = "VGG, 2 stages, GPipe over 2 micro-batches (dropout)",
                     .model = "small_vgg",
                     .micro_batches = 2},
        PipelineCase{.name = "LSTM, 2 stages, GPipe over 2 micro-batches",
                     .model = "small_lstm",
                     .micro_batches = 2,
                     .placement = StagePlacement{"drop"}},
        PipelineCase{.name = "LSTM, 2 balanced stages, 1F1B over 4 micro-batches",
                     .model = "small_lstm",
                     .micro_batches = 4,
                     .schedule = PipelineSchedule::one_f_one_b},
        PipelineCase{.name = "LSTM with a sampled softmax, 2 stages, 1F1B over 4 micro-batches",
                     .model = "sampled_lstm",
                     .micro_batches = 4,
                     .schedule = PipelineSchedule::one_f_one_b},
        PipelineCase{.name = "GNMT-like, decoder on the second stage (memory crossing), "
                             "1F1B over 2 micro-batches",
                     .model = "tiny_gnmt",
                     .micro_batches = 2,
                     .schedule = PipelineSchedule::one_f_one_b,
                     .placement = StagePlacement{"attention"}},
        PipelineCase{
            .name =
                "GNMT-like, 4 stages (the shared table on the first), GPipe over 4 micro-batches",
            .model = "tiny_gnmt",
            .stages = 4,
            .micro_batches = 4,
            .placement = StagePlacement{"decoder1", "attention", "decoder2_input"}},
        PipelineCase{.name = "ResNet, 2 stages, GPipe over 2 micro-batches, blocks recomputed",
                     .model = "narrow_resnet",
                     .micro_batches = 2,
                     .placement = StagePlacement{"b1_conv2"},
                     .recompute = RecomputePolicy::full},
        PipelineCase{
            .name = "tiny GPT, the head's tied table copied to the second stage, 1F1B over 4 "
                    "micro-batches",
            .model = "gpt2",
            .micro_batches = 4,
            .schedule = PipelineSchedule::one_f_one_b},
        PipelineCase{
            .name = "tiny BERT, the decoder's tied table copied to the second stage beside its "
                    "own bias, 1F1B over 4 micro-batches",
            .model = "bert",
            .micro_batches = 4,
            .schedule = PipelineSchedule::one_f_one_b},
        PipelineCase{
            .name = "Transformer, the stages split inside a block, 1F1B over 4 micro-batches, "
                    "blocks recomputed",
            .model = "small_transformer",
            .micro_batches = 4,
            .schedule = PipelineSchedule::one_f_one_b,
            .placement = StagePlacement{"attention"},
            .recompute = RecomputePolicy::full}),
    [](const ::testing::TestParamInfo<PipelineCase>& param) {
      return std::to_string(param.index);
    });

// Micro-batches without stages: the gradients of each are added up before the one all-reduce.
TEST(MicroBatchesOverMpi, AccumulateLikeOneRankWithTheSameMicroBatches) {
  const auto model =
      load_model_file(std::string(TESSERA_TEST_DATA_DIR) + "/models/families/narrow_resnet.yaml");
  testing::TrainingCase parallel;
  parallel.optimizer = Optimizer::momentum;
  parallel.steps = 2;
  parallel.dataset_samples = 16;
  parallel.config.data = world().size();
  parallel.config.mini_batch = 4;
  parallel.config.micro_batches = 2;
  testing::TrainingCase alone = parallel;
  alone.config.data = 1;
  alone.config.mini_batch = parallel.config.global_batch();
  alone.config.micro_batches = 2 * world().size();
  auto own = world().split(world().rank(), 0);
  const auto reference = testing::train_model(*own, model, alone);
  const auto run = testing::train_model(world(), model, parallel);
  testing::expect_trains_like(run, reference, world().rank());
}

}  // namespace
}  // namespace tessera::kernels
