// A tied table over pipeline stages (table_copies.hpp): GPT's head on the last stage holds a copy
// of the token embedding's table (its memory counted there), and the two stages sum the table's
// gradients after the data-parallel all-reduce, as Megatron-LM does.
#include "tessera/core/strategy/table_copies.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "tessera/core/strategy/step_program.hpp"
#include "tessera/core/zoo/model_zoo.hpp"
#include "test_support.hpp"

namespace tessera {
namespace {

using test::tiny_gpt;

ShardPlan staged_plan(const ModelGraph& model, std::int64_t stages, std::int64_t tensor = 1) {
  ParallelConfig config;
  config.mini_batch = 4;
  config.data = 2;
  config.tensor = tensor;
  config.model_degree = stages;
  config.micro_batches = 2;
  return plan_shards(model, config, "", {});
}

std::vector<StepOp> table_sums(const StepProgram& program) {
  std::vector<StepOp> sums;
  for (const auto& op : program.ops) {
    if (op.kind == StepOpKind::group_allreduce && op.group == CollectiveGroup::table) {
      sums.push_back(op);
    }
  }
  return sums;
}

TEST(TableCopies, OneStageKeepsOneTable) {
  const auto model = tiny_gpt();
  const auto plan = staged_plan(model, 1);
  const auto copies = table_copies(model, plan);
  const auto embedding = *model.index_of("token_embedding");
  const auto head = *model.index_of("head");
  EXPECT_EQ(copies.holder.at(head), embedding);
  EXPECT_FALSE(copies.holds_copy(head));
  EXPECT_TRUE(copies.stages.at(embedding).empty());
  EXPECT_EQ(plan.layers.at(head).parameters, 0);
  const ComputeCostModel costs{test::program_test_device(), nullptr, 64.0 * 1024 * 1024};
  EXPECT_TRUE(table_sums(build_step_programs(model, plan, costs, {}).at(0)).empty());
}

TEST(TableCopies, TheLastStageHoldsACopySummedWithTheFirst) {
  const auto model = tiny_gpt();
  const auto embedding = *model.index_of("token_embedding");
  const auto head = *model.index_of("head");
  for (std::int64_t tensor : {1, 2}) {
    const auto plan = staged_plan(model, 2, tensor);
    ASSERT_EQ(plan.layers.at(embedding).stage, 0);
    ASSERT_EQ(plan.layers.at(head).stage, 1);
    const auto copies = table_copies(model, plan);
    EXPECT_EQ(copies.holder.at(head), head);
    EXPECT_EQ(copies.origin.at(head), embedding);
    EXPECT_TRUE(copies.holds_copy(head));
    EXPECT_EQ(copies.stages.at(embedding), (std::vector<int>{0, 1}));
    EXPECT_EQ(copies.stages.at(head), (std::vector<int>{0, 1}));
    // The copy's share of the table, as the owner's (the vocabulary split over the tensor group).
    EXPECT_EQ(plan.layers.at(head).parameters, plan.layers.at(embedding).parameters);
    EXPECT_EQ(plan.layers.at(embedding).parameters, 50 * 64 / tensor);

    const ComputeCostModel costs{test::program_test_device(), nullptr, 64.0 * 1024 * 1024};
    const auto programs = build_step_programs(model, plan, costs, {.dtype = DType::float16});
    ASSERT_EQ(programs.size(), 2U);
    const std::size_t holders[] = {embedding, head};
    for (const auto& program : programs) {
      const auto sums = table_sums(program);
      ASSERT_EQ(sums.size(), 1U) << "stage " << program.stage;
      const auto& sum = sums.front();
      EXPECT_EQ(sum.layer, holders[program.stage]);
      EXPECT_DOUBLE_EQ(sum.bytes, 2.0 * 50 * 64 / static_cast<double>(tensor));
      EXPECT_EQ(program.table_stages.at(sum.layer), (std::vector<int>{0, 1}));
      // After the data-parallel sums are in, before the update.
      const auto at = [&](StepOpKind kind) {
        return std::find_if(program.ops.begin(), program.ops.end(),
                            [&](const StepOp& op) { return op.kind == kind; }) -
               program.ops.begin();
      };
      const auto sum_at =
          std::find_if(program.ops.begin(), program.ops.end(),
                       [](const StepOp& op) { return op.group == CollectiveGroup::table; }) -
          program.ops.begin();
      EXPECT_LT(at(StepOpKind::gradient_wait), sum_at);
      EXPECT_LT(sum_at, at(StepOpKind::update));
    }
    // The copy counts on the last stage: the two stages hold the model's parameters and one
    // more share of the table.
    ParallelConfig whole = plan.config;
    whole.model_degree = 1;
    whole.micro_batches = 1;
    const auto alone = stage_parameters(model, plan_shards(model, whole, "", {})).at(0);
    const auto staged = stage_parameters(model, plan);
    EXPECT_DOUBLE_EQ(staged.at(0) + staged.at(1),
                     alone + static_cast<double>(plan.layers.at(embedding).parameters));
  }
}

// BERT's decoder keeps its own bias beside the copy of the word embedding's table: it counts in
// the copy's parameters, but the stages sum the table's gradients only.
TEST(TableCopies, ACopysOwnBiasIsNotSummedWithTheTable) {
  const auto model = build_zoo_model("bert", {{"layers", "2"},
                                              {"hidden", "64"},
                                              {"heads", "4"},
                                              {"sequence_length", "8"},
                                              {"vocabulary", "48"}});
  const auto embedding = *model.index_of("word_embedding");
  const auto decoder = *model.index_of("mlm_decoder");
  const auto plan = staged_plan(model, 2);
  ASSERT_EQ(plan.layers.at(decoder).stage, 1);
  EXPECT_EQ(plan.layers.at(decoder).parameters, plan.layers.at(embedding).parameters + 48);
  const ComputeCostModel costs{test::program_test_device(), nullptr, 64.0 * 1024 * 1024};
  for (const auto& program : build_step_programs(model, plan, costs, {})) {
    const auto sums = table_sums(program);
    ASSERT_EQ(sums.size(), 1U) << "stage " << program.stage;
    EXPECT_DOUBLE_EQ(sums.front().bytes, 4.0 * 48 * 64) << "stage " << program.stage;
  }
}

}  // namespace
}  // namespace tessera
