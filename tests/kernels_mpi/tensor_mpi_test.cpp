// Tensor parallelism on the real backend is exact: a transformer split over a tensor group as
// Megatron-LM splits it (projections by column and row, attention by heads, the embedding and
// the loss by vocabulary), or a CNN as Dryden et al. split it (convolutions' filters and
// channels), with data parallelism or pipelined stages over the other ranks, gives
// after a few momentum steps the losses of one rank training the same samples alone, and each
// rank holds its part of the one rank's weights, within float32 rounding. Every rank executes
// its program's tensor-group all-reduces as the program places them.
#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>

#include "../kernels/real_training_support.hpp"
#include "mpi_world.hpp"

namespace tessera::kernels {
namespace {

using testing::world;

struct TensorCase {
  std::string name;
  std::string model;  // "gpt2" (the zoo's, tiny), or a file of tests/data/models/families
  std::int64_t tensor = 2;
  std::int64_t stages = 1;
  std::int64_t micro_batches = 1;
  PipelineSchedule schedule = PipelineSchedule::gpipe;
  StagePlacement placement;
  ShardLevel shard = ShardLevel::none;
  RecomputePolicy recompute = RecomputePolicy::none;
};

std::ostream& operator<<(std::ostream& out, const TensorCase& c) {
  return out << c.name;
}

std::size_t count(const StepProgram& program, StepOpKind kind, CollectiveGroup group) {
  return static_cast<std::size_t>(
      std::count_if(program.ops.begin(), program.ops.end(),
                    [&](const StepOp& op) { return op.kind == kind && op.group == group; }));
}

class TensorOverMpi : public ::testing::TestWithParam<TensorCase> {};

TEST_P(TensorOverMpi, MatchesOneRankTrainingTheGlobalBatch) {
  const TensorCase& c = GetParam();
  const auto ranks = static_cast<std::int64_t>(world().size());
  if (ranks % (c.tensor * c.stages) != 0) {
    GTEST_SKIP() << c.tensor << " x " << c.stages << " ranks per replica need a multiple of ranks";
  }
  const auto model = testing::tiny_gpt_or_family(c.model);
  testing::TrainingCase parallel;
  parallel.optimizer = Optimizer::momentum;  // linear in the gradients: rounding stays small
  parallel.steps = 3;
  parallel.dataset_samples = 16;
  parallel.config.tensor = c.tensor;
  parallel.config.model_degree = c.stages;
  parallel.config.data = ranks / (c.tensor * c.stages);
  parallel.config.mini_batch = 2 * c.micro_batches;
  parallel.config.micro_batches = c.micro_batches;
  parallel.config.schedule = c.schedule;
  parallel.placement = c.placement;
  parallel.shard = c.shard;
  parallel.recompute = c.recompute;
  testing::TrainingCase alone = parallel;
  alone.config.tensor = 1;
  alone.config.model_degree = 1;
  alone.config.data = 1;
  alone.config.mini_batch = parallel.config.global_batch();
  alone.config.micro_batches = parallel.config.data * c.micro_batches;
  alone.config.schedule = PipelineSchedule::gpipe;
  alone.placement = {};
  alone.shard = ShardLevel::none;
  alone.recompute = RecomputePolicy::none;

  auto own = world().split(world().rank(), 0);
  const auto reference = testing::train_model(*own, model, alone);
  parallel.reference = &reference;
  const auto run = testing::train_model(world(), model, parallel);

  testing::expect_losses_match(run, reference, world().rank());
  EXPECT_NE(run.losses.front(), run.losses.back()) << "the weights did not move";
  testing::WeightGap gap;
  std::size_t split_layers = 0;
  for (std::size_t i = 0; i < run.layer_parameters.size(); ++i) {
    const auto& mine = run.layer_parameters[i];
    if (mine.empty()) continue;
    const auto& expected = run.reference_parts.at(i);
    ASSERT_EQ(mine.size(), expected.size()) << model.layers()[i].layer.name;
    split_layers += mine.size() < reference.layer_parameters[i].size() ? 1 : 0;
    gap.add(mine, expected);
  }
  EXPECT_GT(split_layers, 0U) << "no layer's weights were split";
  EXPECT_LE(gap.largest_difference, 1e-5 * gap.largest_weight) << "rank " << world().rank();
  EXPECT_EQ(run.last_step.executed, testing::expected_executions(run.program));
  EXPECT_GT(count(run.program, StepOpKind::group_allreduce, CollectiveGroup::tensor), 0U);
}

INSTANTIATE_TEST_SUITE_P(
    Splits, TensorOverMpi,
    ::testing::Values(
        TensorCase{.name = "tiny GPT (tied head), tensor 2", .model = "gpt2"},
        TensorCase{.name = "small transformer (untied head), tensor 2",
                   .model = "small_transformer"},
        // BERT's decoder: the table tied, its bias its own and split with the classes.
        TensorCase{.name = "tiny BERT (tied head with a bias), tensor 2", .model = "bert"},
        TensorCase{.name = "tiny BERT, a vocabulary of 47 padded, tensor 2",
                   .model = "bert_vocabulary_47"},
        TensorCase{.name = "tiny BERT, tensor 2 x 2 stages (the decoder's table copied beside its "
                           "bias), 1F1B over 2 micro-batches",
                   .model = "bert",
                   .stages = 2,
                   .micro_batches = 2,
                   .schedule = PipelineSchedule::one_f_one_b},
        TensorCase{.name = "tiny GPT, tensor 4", .model = "gpt2", .tensor = 4},
        // 24 + 23 rows at 2, 12 + 12 + 12 + 11 at 4: the last rank's row past 47 is padding.
        TensorCase{.name = "tiny GPT, a vocabulary of 47 padded, tensor 2",
                   .model = "gpt2_vocabulary_47"},
        TensorCase{.name = "tiny GPT, a vocabulary of 47 padded, tensor 4",
                   .model = "gpt2_vocabulary_47",
                   .tensor = 4},
        TensorCase{.name = "tiny GPT, tensor 2 x 2 stages (the head's table copied), 1F1B over 4 "
                           "micro-batches",
                   .model = "gpt2",
                   .stages = 2,
                   .micro_batches = 4,
                   .schedule = PipelineSchedule::one_f_one_b},
        TensorCase{.name = "small transformer, tensor 2 x 2 stages, GPipe over 2 micro-batches",
                   .model = "small_transformer",
                   .stages = 2,
                   .micro_batches = 2,
                   .placement = StagePlacement{"mlp_norm"}},
        TensorCase{.name = "tiny GPT, tensor 2, blocks recomputed",
                   .model = "gpt2",
                   .recompute = RecomputePolicy::full},
        TensorCase{.name = "tiny GPT, tensor 2, optimizer state sharded over the replicas",
                   .model = "gpt2",
                   .shard = ShardLevel::optimizer},
        // Convolutions alternate filter and channel splits (Dryden et al.), then the fully
        // connected layers column and row.
        TensorCase{.name = "GELU CNN, tensor 2", .model = "gelu_cnn"},
        TensorCase{.name = "VGG, tensor 2, the loss over split classes", .model = "small_vgg"},
        TensorCase{.name = "CNN with batch-norm on split channels, tensor 2", .model = "bn_cnn"},
        TensorCase{.name = "residual CNN: the sum all-gathers its split input, tensor 2",
                   .model = "residual_cnn"}),
    [](const ::testing::TestParamInfo<TensorCase>& param) { return std::to_string(param.index); });

}  // namespace
}  // namespace tessera::kernels
