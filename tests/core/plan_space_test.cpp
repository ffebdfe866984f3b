// The strategy space of `tessera plan` (plan_space.hpp) and what is known of a candidate before
// simulating it (plan_screen.hpp): enumeration, pins, batch rules, validity, memory and the
// step's lower bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "step_op_test_support.hpp"
#include "tessera/core/plan_search/plan_screen.hpp"
#include "tessera/core/plan_search/plan_space.hpp"
#include "tessera/core/strategy/memory_estimate.hpp"
#include "test_support.hpp"

namespace tessera {
namespace {

LoadedScenario plan_space_cosmoflow(const std::string& extra = "") {
  return load_scenario_text(R"(
name: plan-space
model: {zoo: cosmoflow, options: {width: 128}, mini_batch: 1}
parallelism: {data: 4, spatial: {grid: [2, 1, 1], until: pool3}}
platform: {preset: lassen}
)" + extra,
                            "plan.yaml", "");
}

PlanSpaceOptions at_gpus(const LoadedScenario& loaded, std::int64_t gpus) {
  auto options = default_space_options(loaded);
  options.gpus = {gpus};
  return options;
}

TEST(PlanSpace, KeepsTheGlobalBatchAndEveryGpuCount) {
  const auto loaded = plan_space_cosmoflow();
  const auto options = at_gpus(loaded, 8);
  ASSERT_EQ(options.global_batch, 4);
  const auto candidates = enumerate_candidates(loaded, options);
  ASSERT_FALSE(candidates.empty());
  std::set<std::string> keys;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const auto& s = candidates[i].strategy;
    EXPECT_EQ(candidates[i].index, i);
    EXPECT_EQ(s.gpus(), 8);
    EXPECT_EQ(s.global_batch(), 4);
    EXPECT_EQ(s.offload, OffloadPolicy::dyn);
    EXPECT_TRUE(keys.insert(strategy_key(s)).second) << "duplicate " << describe(s);
  }
  // data 1, 2 and 4 (8 replicas cannot share 4 samples), each with model degrees and grids.
  std::set<std::int64_t> datas, degrees;
  for (const auto& c : candidates) {
    datas.insert(c.strategy.data);
    degrees.insert(c.strategy.model_degree);
  }
  EXPECT_EQ(datas, (std::set<std::int64_t>{1, 2, 4}));
  EXPECT_EQ(degrees, (std::set<std::int64_t>{1, 2, 4, 8}));
}

TEST(PlanSpace, AnUnsplitGridTriesOneSplitEndAndSplitGridsEveryPool) {
  const auto loaded = plan_space_cosmoflow();
  const auto candidates = enumerate_candidates(loaded, at_gpus(loaded, 2));
  std::set<std::string> unsplit_ends, split_ends;
  for (const auto& c : candidates) {
    const bool split = c.strategy.config().spatial_parts() > 1;
    (split ? split_ends : unsplit_ends).insert(c.strategy.spatial_until);
  }
  EXPECT_EQ(unsplit_ends, (std::set<std::string>{"pool3"}));  // the scenario's own
  EXPECT_EQ(split_ends.size(), split_end_candidates(loaded.model).size());
  EXPECT_TRUE(split_ends.count(""));
  EXPECT_TRUE(split_ends.count("pool1"));
}

TEST(PlanSpace, PinnedKeysKeepTheScenariosValues) {
  const auto loaded = plan_space_cosmoflow();
  auto options = at_gpus(loaded, 8);
  options.pinned = {"parallelism.data",         "parallelism.spatial.until", "memory.offload",
                    "parallelism.model.degree", "parallelism.tensor",        "memory.shard"};
  for (const auto& c : enumerate_candidates(loaded, options)) {
    EXPECT_EQ(c.strategy.data, 4);
    EXPECT_EQ(c.strategy.model_degree, 1);
    EXPECT_EQ(c.strategy.spatial_until, "pool3");
    EXPECT_EQ(c.strategy.offload, OffloadPolicy::none);
    EXPECT_EQ(c.strategy.config().spatial_parts(), 2);
  }
  options.pinned.insert("parallelism.spatial.grid");
  const auto pinned = enumerate_candidates(loaded, options);
  ASSERT_EQ(pinned.size(), 1u);
  EXPECT_EQ(pinned.front().strategy, scenario_strategy(loaded, 0));
}

TEST(PlanSpace, StagesPipelineTheMicroBatchesThatDivideTheBatchUnderEitherSchedule) {
  const auto loaded = plan_space_cosmoflow();
  auto options = at_gpus(loaded, 8);
  options.global_batch.reset();
  options.mini_batch = 4;
  options.max_micro_batches = 2;
  using Pipeline = std::pair<std::int64_t, PipelineSchedule>;
  std::map<std::int64_t, std::set<Pipeline>> by_degree;
  for (const auto& c : enumerate_candidates(loaded, options)) {
    by_degree[c.strategy.model_degree].insert({c.strategy.micro_batches, c.strategy.schedule});
  }
  const std::set<Pipeline> one{{1, PipelineSchedule::gpipe}};
  const std::set<Pipeline> pipelined{{1, PipelineSchedule::gpipe},
                                     {2, PipelineSchedule::gpipe},
                                     {2, PipelineSchedule::one_f_one_b}};
  EXPECT_EQ(by_degree[1], one);
  EXPECT_EQ(by_degree[2], pipelined);
  EXPECT_EQ(by_degree[8], pipelined);
  options.max_micro_batches = 8;  // 4 samples: 1, 2 or 4 micro-batches
  std::set<std::int64_t> splits;
  for (const auto& c : enumerate_candidates(loaded, options))
    splits.insert(c.strategy.micro_batches);
  EXPECT_EQ(splits, (std::set<std::int64_t>{1, 2, 4}));
}

TEST(PlanSpace, PinnedPipelinesKeepTheScenariosMicroBatchesAndSchedule) {
  const auto loaded = load_scenario_text(R"(
name: plan-pipeline
model: {zoo: cosmoflow, options: {width: 128}, mini_batch: 4}
parallelism: {data: 2, model: {degree: 2, micro_batches: 4, schedule: 1f1b}}
platform: {preset: lassen}
)",
                                         "plan.yaml", "");
  auto options = at_gpus(loaded, 8);
  const auto& keys = plan_search_keys();
  for (const char* key : {"parallelism.model.micro_batches", "parallelism.model.schedule"}) {
    EXPECT_NE(std::find(keys.begin(), keys.end(), key), keys.end()) << key;
  }
  options.pinned = {"parallelism.model.micro_batches", "parallelism.model.schedule"};
  std::set<std::int64_t> degrees;
  for (const auto& c : enumerate_candidates(loaded, options)) {
    degrees.insert(c.strategy.model_degree);
    EXPECT_EQ(c.strategy.micro_batches, 4) << describe(c.strategy);
    EXPECT_EQ(c.strategy.schedule, PipelineSchedule::one_f_one_b);
  }
  EXPECT_GT(degrees.size(), 1u);
  options.pinned = {"parallelism.model.schedule"};
  for (const auto& c : enumerate_candidates(loaded, options)) {
    EXPECT_EQ(c.strategy.schedule, PipelineSchedule::one_f_one_b);
  }
  // Every key pinned, at the scenario's 4 GPUs: its own strategy alone.
  options = at_gpus(loaded, 4);
  options.pinned = std::set<std::string>(keys.begin(), keys.end());
  const auto own = enumerate_candidates(loaded, options);
  ASSERT_EQ(own.size(), 1u);
  EXPECT_EQ(own.front().strategy, scenario_strategy(loaded, 0));
  EXPECT_TRUE(test::contains(describe(own.front().strategy), "in 4 micro-batches (1f1b)"))
      << describe(own.front().strategy);
}

TEST(PlanSpace, TriesTensorDegreesAndShardingWhereTheyApply) {
  const auto loaded = load_scenario_text(R"(
name: plan-gpt
model: {zoo: gpt2, options: {layers: 4, hidden: 256, heads: 8, sequence_length: 128}, mini_batch: 8}
parallelism: {data: 2}
platform: {preset: dgx_h100_superpod}
)",
                                         "plan.yaml", "");
  auto options = at_gpus(loaded, 16);
  options.max_tensor_degree = 8;
  std::set<std::int64_t> tensors;
  std::set<ShardLevel> shards;
  for (const auto& c : enumerate_candidates(loaded, options)) {
    const auto& s = c.strategy;
    tensors.insert(s.tensor);
    shards.insert(s.shard);
    EXPECT_EQ(s.data * s.model_degree * s.tensor * s.config().spatial_parts(), 16);
    // Under a pipeline ZeRO shards only the optimizer state; one GPU per stage, nothing.
    if (s.model_degree > 1) {
      EXPECT_LE(s.shard, ShardLevel::optimizer) << describe(s);
    }
    if (s.data * s.config().spatial_parts() == 1) {
      EXPECT_EQ(s.shard, ShardLevel::none) << describe(s);
    }
    if (s.tensor > 1) {
      EXPECT_TRUE(test::contains(describe(s), " x tensor ")) << describe(s);
    }
  }
  EXPECT_EQ(tensors, (std::set<std::int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(shards.size(), 4u);
  // Pinned, the scenario's own.
  options.pinned = {"parallelism.tensor", "memory.shard"};
  for (const auto& c : enumerate_candidates(loaded, options)) {
    EXPECT_EQ(c.strategy.tensor, 1);
    EXPECT_EQ(c.strategy.shard, ShardLevel::none);
  }
  // A tensor degree the heads do not allow is screened out as invalid, naming the key.
  PlanStrategy strategy = scenario_strategy(loaded, 0);
  strategy.data = 1;
  strategy.tensor = 16;
  const auto screened = screen_candidate(loaded, {0, strategy}, nullptr);
  EXPECT_FALSE(screened.valid);
  EXPECT_TRUE(test::contains(screened.invalid_reason, "parallelism.tensor"))
      << screened.invalid_reason;
}

TEST(PlanSpace, ASplitProportionalToGpuSpeedKeepsPureDataParallelism) {
  const auto loaded = load_scenario_text(R"(
name: plan-proportional
model: {zoo: resnet18, mini_batch: 64}
parallelism: {data: 16, data_split: proportional}
platform: {preset: v100_p100_mixed}
)",
                                         "plan.yaml", "");
  const auto candidates = enumerate_candidates(loaded, at_gpus(loaded, 16));
  ASSERT_FALSE(candidates.empty());
  for (const auto& c : candidates) {
    EXPECT_EQ(c.strategy.data, 16) << describe(c.strategy);
    EXPECT_EQ(c.strategy.config().spatial_parts(), 1);
    EXPECT_EQ(c.strategy.model_degree, 1);
  }
  // Shares by speed over mixed nodes: no bound is claimed (plan_screen.cpp).
  const auto screened = screen_candidate(loaded, candidates.front(), nullptr);
  ASSERT_TRUE(screened.valid && screened.fits);
  EXPECT_EQ(screened.step_lower_bound_seconds, 0.0);
}

TEST(PlanSpace, PlansForTheLargestPointWhateverTheSweepsOrder) {
  const auto loaded = plan_space_cosmoflow("sweep: {scaling: weak, gpus: [16, 8]}\n");
  EXPECT_EQ(default_space_options(loaded).gpus, (std::vector<std::int64_t>{16}));
}

TEST(PlanSpace, WeakScalingKeepsTheBatchPerReplica) {
  const auto loaded = plan_space_cosmoflow("sweep: {scaling: weak, gpus: [8, 16]}\n");
  const auto options = default_space_options(loaded);
  EXPECT_EQ(options.mini_batch, 1);
  EXPECT_EQ(options.gpus, (std::vector<std::int64_t>{16}));
  for (const auto& c : enumerate_candidates(loaded, options)) EXPECT_EQ(c.strategy.mini_batch, 1);
}

TEST(PlanSpace, EveryOffloadPolicyAndTheSplitLimit) {
  const auto loaded = plan_space_cosmoflow();
  auto options = at_gpus(loaded, 4);
  options.every_offload_policy = true;
  options.max_spatial_parts = 2;
  std::set<OffloadPolicy> policies;
  for (const auto& c : enumerate_candidates(loaded, options)) {
    policies.insert(c.strategy.offload);
    EXPECT_LE(c.strategy.config().spatial_parts(), 2);
  }
  EXPECT_EQ(policies, (std::set<OffloadPolicy>{OffloadPolicy::none, OffloadPolicy::conv,
                                               OffloadPolicy::all}));
}

TEST(PlanSpace, ABatchNoReplicaCountSharesIsAnInputError) {
  const auto loaded = plan_space_cosmoflow();
  auto options = at_gpus(loaded, 8);
  options.pinned = {"parallelism.data"};
  options.global_batch = 3;
  const auto error = test::input_error([&] { enumerate_candidates(loaded, options); });
  EXPECT_EQ(error.key(), "--global-batch");
}

TEST(PlanScreen, InvalidSplitsAndMemoryAreFoundBeforeSimulating) {
  auto loaded = plan_space_cosmoflow();
  PlanStrategy strategy = scenario_strategy(loaded, 0);
  strategy.data = 1;
  strategy.mini_batch = 4;
  strategy.spatial_grid = {256, 1, 1};  // 128 planes cannot be split 256 ways
  const auto invalid = screen_candidate(loaded, {0, strategy}, nullptr);
  EXPECT_FALSE(invalid.valid);
  EXPECT_TRUE(test::contains(invalid.invalid_reason, "parallelism.spatial.grid"))
      << invalid.invalid_reason;

  strategy.spatial_grid = {2, 1, 1};
  const auto fits = screen_candidate(loaded, {1, strategy}, nullptr);
  ASSERT_TRUE(fits.valid);
  EXPECT_TRUE(fits.fits);
  EXPECT_GT(fits.step_lower_bound_seconds, 0);
  apply_memory_limit(loaded, fits.peak_memory_bytes / 2);
  const auto too_big = screen_candidate(loaded, {1, strategy}, nullptr);
  EXPECT_FALSE(too_big.fits);
  EXPECT_EQ(too_big.peak_memory_bytes, fits.peak_memory_bytes);
}

TEST(PlanScreen, ThreadsScreenAsOneDoes) {
  const auto loaded = plan_space_cosmoflow();
  const auto candidates = enumerate_candidates(loaded, at_gpus(loaded, 8));
  ASSERT_GT(candidates.size(), 100u);
  const auto alone = screen_candidates(loaded, candidates, nullptr, 1);
  const auto threaded = screen_candidates(loaded, candidates, nullptr, 3);
  ASSERT_EQ(threaded.size(), alone.size());
  std::set<std::string> signatures;
  for (std::size_t i = 0; i < alone.size(); ++i) {
    SCOPED_TRACE(describe(candidates[i].strategy));
    EXPECT_EQ(threaded[i].candidate.index, candidates[i].index);
    EXPECT_EQ(threaded[i].valid, alone[i].valid);
    EXPECT_EQ(threaded[i].invalid_reason, alone[i].invalid_reason);
    EXPECT_EQ(threaded[i].fits, alone[i].fits);
    EXPECT_EQ(threaded[i].peak_memory_bytes, alone[i].peak_memory_bytes);
    EXPECT_EQ(threaded[i].step_lower_bound_seconds, alone[i].step_lower_bound_seconds);
    EXPECT_EQ(threaded[i].simulation_signature, alone[i].simulation_signature);
    if (alone[i].valid && alone[i].fits) signatures.insert(alone[i].simulation_signature);
  }
  // Signatures tell candidates apart (and some coincide: plan_search_sim_test.cpp).
  EXPECT_GT(signatures.size(), 10u);
}

TEST(PlanScreen, TheCandidateScenarioHoldsTheStrategy) {
  const auto loaded = plan_space_cosmoflow("sweep: {scaling: strong, grow: data, gpus: [2, 4]}\n");
  PlanStrategy strategy = scenario_strategy(loaded, 0);
  strategy.data = 2;
  strategy.mini_batch = 2;
  strategy.spatial_grid = {1, 2, 2};
  strategy.spatial_until = "pool2";
  strategy.offload = OffloadPolicy::conv;
  const auto candidate = candidate_scenario(loaded, strategy);
  ASSERT_EQ(candidate.points.size(), 1u);
  EXPECT_FALSE(candidate.scenario.sweep.has_value());
  EXPECT_EQ(candidate.points.front().config.gpus(), 8);
  EXPECT_EQ(scenario_strategy(candidate, 0), strategy);
}

using test::compute_op;

StepOp transfer(StepOpKind kind, int peer, std::int64_t micro_batch = 0) {
  StepOp op = test::communication_op(kind);
  op.peer_stage = peer;
  op.micro_batch = micro_batch;
  return op;
}

TEST(PlanScreen, TheLowerBoundFollowsComputeThroughTheStageChain) {
  StepProgram alone;
  alone.ops = {compute_op(1), transfer(StepOpKind::gradient_wait, -1), compute_op(2)};
  EXPECT_DOUBLE_EQ(step_lower_bound({alone}), 3);

  // Two stages one after another: 1 forward on stage 0, then 2 + 3 on stage 1, then 4
  // backward on stage 0.
  StepProgram first, second;
  first.stage = 0;
  first.ops = {compute_op(1), transfer(StepOpKind::stage_send, 1),
               transfer(StepOpKind::stage_recv, 1), compute_op(4)};
  second.stage = 1;
  second.ops = {transfer(StepOpKind::stage_recv, 0), compute_op(2), compute_op(3),
                transfer(StepOpKind::stage_send, 0)};
  EXPECT_DOUBLE_EQ(step_lower_bound({first, second}), 10);
  EXPECT_DOUBLE_EQ(step_lower_bound({second, first}), 10);  // in any order

  // Micro-batches' messages pair by micro-batch, not by order: stage 1 waits for the second one
  // (sent at 2) first, and then finds the first one there.
  first.ops = {compute_op(1), transfer(StepOpKind::stage_send, 1, 0), compute_op(1),
               transfer(StepOpKind::stage_send, 1, 1)};
  second.ops = {transfer(StepOpKind::stage_recv, 0, 1), compute_op(5),
                transfer(StepOpKind::stage_recv, 0, 0), compute_op(5)};
  EXPECT_DOUBLE_EQ(step_lower_bound({first, second}), 12);
}

TEST(PlanScreen, TheStageChainWaitsForEachMessagesTransfer) {
  // Stage 0 computes 1 s and sends; stage 1 receives, computes 2 s and sends back; stage 0
  // receives and computes 1 s. Each transfer takes at least 0.5 s once both ends are there.
  StepProgram first, second;
  first.stage = 0;
  first.ops = {compute_op(1), transfer(StepOpKind::stage_send, 1),
               transfer(StepOpKind::stage_recv, 1), compute_op(1)};
  second.stage = 1;
  second.ops = {transfer(StepOpKind::stage_recv, 0), compute_op(2),
                transfer(StepOpKind::stage_send, 0)};
  EXPECT_DOUBLE_EQ(step_lower_bound({first, second}), 4);
  const StageTransferSeconds half_a_second = [](int, int, double) { return 0.5; };
  EXPECT_DOUBLE_EQ(step_lower_bound({first, second}, half_a_second), 5);
}

}  // namespace
}  // namespace tessera
