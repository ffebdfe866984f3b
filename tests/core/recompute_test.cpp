// Activation recomputation (memory.recompute: full): the segments between the cuts of a stage's
// graph, their inner feature maps dropped after forward and made again before backward, and the
// forward ops (with their tensor-group collectives) the step program runs again.
#include <gtest/gtest.h>

#include "test_support.hpp"

#include <algorithm>

#include "tessera/core/strategy/memory_peak.hpp"
#include "tessera/core/strategy/memory_plan.hpp"
#include "tessera/core/strategy/recompute_segments.hpp"
#include "tessera/core/strategy/step_program.hpp"
#include "tessera/core/zoo/model_zoo.hpp"

namespace tessera {
namespace {

using test::program_test_device;

using test::tiny_gpt;

ShardPlan recompute_plan(const ModelGraph& model, std::int64_t tensor = 1) {
  ParallelConfig config;
  config.mini_batch = 2;
  config.tensor = tensor;
  return plan_shards(model, config, "", {});
}

TEST(RecomputeSegments, ATransformerBlockIsTwoSegmentsEndingAtItsResidualSums) {
  const auto model = tiny_gpt();
  const auto ends = recomputed_segment_ends(model, recompute_plan(model), 0);
  auto end_of = [&](const std::string& name) { return ends.at(*model.index_of(name)); };
  const auto attention_sum = *model.index_of("block1_attention_residual");
  const auto mlp_sum = *model.index_of("block1_mlp_residual");
  for (const char* name : {"block1_attention_norm", "block1_attention", "block1_attention_dropout",
                           "block1_attention_residual"}) {
    EXPECT_EQ(end_of(name), attention_sum) << name;
  }
  for (const char* name : {"block1_mlp_norm", "block1_mlp_in", "block1_mlp_gelu", "block1_mlp_out",
                           "block1_mlp_dropout", "block1_mlp_residual"}) {
    EXPECT_EQ(end_of(name), mlp_sum) << name;
  }
  // A chain of single layers keeps everything: the embeddings, the head, the loss.
  for (const char* name : {"tokens", "token_embedding", "final_norm", "head", "loss"}) {
    EXPECT_FALSE(end_of(name).has_value()) << name;
  }
}

TEST(RecomputeSegments, AStagesFirstBlockIsRecomputedFromTheTensorItReceives) {
  const auto model = tiny_gpt();
  ParallelConfig config;
  config.mini_batch = 2;
  config.model_degree = 2;
  // Stage 1 starts at block 2's first layer: its input, block 1's sum, comes from stage 0 and
  // is read by the attention norm and the residual sum.
  const auto plan = plan_shards(model, config, "",
                                StagePlacement(std::vector<std::string>{"block2_attention_norm"}));
  const auto ends = recomputed_segment_ends(model, plan, 1);
  const auto sum = *model.index_of("block2_attention_residual");
  EXPECT_EQ(ends.at(*model.index_of("block2_attention_norm")), sum);
  EXPECT_EQ(ends.at(*model.index_of("block2_attention")), sum);
}

TEST(RecomputeSegments, AChainHasNothingToRecompute) {
  const auto model = build_zoo_model("cosmoflow", {{"width", "128"}});
  ParallelConfig config;
  config.mini_batch = 1;
  const auto ends = recomputed_segment_ends(model, plan_shards(model, config, "", {}), 0);
  EXPECT_TRUE(std::none_of(ends.begin(), ends.end(), [](const auto& end) { return end; }));
}

struct Programs {
  ModelGraph model = tiny_gpt();
  ShardPlan plan;
  ComputeCostModel costs{program_test_device(), nullptr, 0};
  StepProgram program;
  MemoryPeak peak;

  Programs(RecomputePolicy recompute, std::int64_t tensor) : plan(recompute_plan(model, tensor)) {
    StepOptions options;
    options.recompute = recompute;
    program = build_step_programs(model, plan, costs, options).at(0);
    const MemoryInputs inputs{.recompute = recompute, .capacity_bytes = 1e12};
    peak = peak_of(model, plan, plan_stage_memory(model, plan, 0, inputs, {}));
  }

  int count(bool recomputed, StepOpKind kind) const {
    return static_cast<int>(std::count_if(program.ops.begin(), program.ops.end(), [&](auto& op) {
      return op.kind == kind && op.recomputed == recomputed;
    }));
  }
};

TEST(Recompute, TheSegmentsForwardRunsAgainBeforeItsBackward) {
  const Programs plain(RecomputePolicy::none, 2);
  const Programs again(RecomputePolicy::full, 2);
  EXPECT_EQ(plain.count(true, StepOpKind::compute), 0);
  // Each block's ten layers but its two residual sums (the checkpoints) run forward once more
  // (two blocks).
  EXPECT_EQ(again.count(true, StepOpKind::compute), 2 * 8);
  EXPECT_EQ(again.count(false, StepOpKind::compute), plain.count(false, StepOpKind::compute));
  // With them the tensor group's forward all-reduces: attention's and the MLP's, per block.
  EXPECT_EQ(again.count(true, StepOpKind::group_allreduce), 2 * 2);
  // A recomputed op comes after the backward of the layers after its segment, before its own.
  const auto& ops = again.program.ops;
  const auto first_again =
      std::find_if(ops.begin(), ops.end(), [](auto& op) { return op.recomputed; });
  ASSERT_NE(first_again, ops.end());
  EXPECT_TRUE(std::any_of(ops.begin(), first_again, [](auto& op) {
    return op.kind == StepOpKind::compute && op.direction != Direction::forward;
  }));
  EXPECT_NE(first_again->label.find("(recompute)"), std::string::npos);
}

TEST(Recompute, AnOutputNoBackwardReadsIsWrittenAgainIntoABufferOfItsOwn) {
  // The attention's output is only summed into the residual: not kept for backward, but the
  // recomputed attention writes it, so it has a buffer from before the recomputation to after.
  const Programs again(RecomputePolicy::full, 1);
  const auto& model = again.model;
  const auto memory = plan_stage_memory(
      model, again.plan, 0, {.recompute = RecomputePolicy::full, .capacity_bytes = 1e12}, {});
  const auto attention = *model.index_of("block1_attention");
  const auto sum = *model.index_of("block1_attention_residual");
  const auto holds = [&](MemoryMoment moment, MemoryEventKind kind) {
    const auto& events = memory.at(sum, moment);
    return std::any_of(events.begin(), events.end(), [&](const MemoryEvent& event) {
      return event.tensor == attention && event.use == MemoryUse::activations && event.kind == kind;
    });
  };
  EXPECT_TRUE(holds(MemoryMoment::before_backward, MemoryEventKind::allocate));
  EXPECT_TRUE(holds(MemoryMoment::after_recompute, MemoryEventKind::release));
  // In the program: allocated before the recomputed attention, released before the sum's
  // backward.
  const auto& ops = again.program.ops;
  const auto at = [&](auto predicate) {
    return std::find_if(ops.begin(), ops.end(), predicate) - ops.begin();
  };
  const auto label = model.layers()[attention].layer.name;
  const auto recomputed = at([&](const StepOp& op) {
    return op.recomputed && op.kind == StepOpKind::compute && op.layer == attention;
  });
  const auto sum_backward = at([&](const StepOp& op) {
    return op.kind == StepOpKind::compute && op.layer == sum && op.direction != Direction::forward;
  });
  const auto released = at([&](const StepOp& op) {
    return op.kind == StepOpKind::release && op.layer == attention &&
           op.memory == MemoryUse::activations && &op - ops.data() > recomputed;
  });
  ASSERT_LT(recomputed, static_cast<std::ptrdiff_t>(ops.size())) << label;
  EXPECT_LT(released, sum_backward);
}

TEST(Recompute, DroppingTheSegmentsFeatureMapsLowersThePeak) {
  const Programs plain(RecomputePolicy::none, 1);
  const Programs again(RecomputePolicy::full, 1);
  const auto use = [](const MemoryPeak& peak, MemoryUse what) {
    return peak.by_use[static_cast<std::size_t>(what)];
  };
  EXPECT_LT(again.peak.total_bytes, plain.peak.total_bytes);
  EXPECT_LT(use(again.peak, MemoryUse::activations) + use(again.peak, MemoryUse::layer_state),
            use(plain.peak, MemoryUse::activations) + use(plain.peak, MemoryUse::layer_state));
  // Weights and the rest do not move.
  EXPECT_EQ(use(again.peak, MemoryUse::weights), use(plain.peak, MemoryUse::weights));
}

}  // namespace
}  // namespace tessera
