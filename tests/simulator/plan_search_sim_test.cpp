// `tessera plan`'s search with the simulator in the loop, on cases small enough (at most 64
// GPUs) to simulate every candidate: the pruned search finds what exhaustive evaluation finds
// (over spaces that hold pipelined model stages), no simulated step is below its candidate's
// lower bound,
// candidates that share a simulation signature do simulate alike, the search is deterministic
// however many children simulate a wave, and the known answers come out of it.
#include <gtest/gtest.h>

#include "tessera/core/plan_search/plan_screen.hpp"
#include "tessera/core/plan_search/plan_search.hpp"
#include "tessera/simulator/plan_evaluation.hpp"

namespace tessera {
namespace {

struct Planned {
  std::vector<ScreenedCandidate> screened;
  PlanSearchResult search;
};

Planned plan(const LoadedScenario& loaded, const PlanSpaceOptions& space, PlanSearchOptions options,
             int jobs = 1) {
  Planned planned;
  planned.screened = screen_candidates(loaded, enumerate_candidates(loaded, space), nullptr);
  options.efficiency = loaded.statistical_efficiency;
  planned.search =
      search_plan(planned.screened, options, sim::local_wave_evaluator(loaded, {}, jobs));
  return planned;
}

PlanSpaceOptions space_at(const LoadedScenario& loaded, std::int64_t gpus) {
  auto space = default_space_options(loaded);
  space.gpus = {gpus};
  return space;
}

// (strategy, step) of the first `most` of a list of outcomes.
std::vector<std::pair<std::string, double>> listed(const PlanSearchResult& search,
                                                   const std::vector<std::size_t>& at,
                                                   std::size_t most) {
  std::vector<std::pair<std::string, double>> out;
  for (std::size_t i = 0; i < std::min(most, at.size()); ++i) {
    const auto& outcome = search.outcomes[at[i]];
    out.emplace_back(strategy_key(outcome.screened.candidate.strategy),
                     outcome.result.step_seconds);
  }
  return out;
}

// Returns how many pipelined candidates (several micro-batches through model stages) exhaustive
// evaluation evaluated (simulated, or sharing another's simulation).
std::size_t expect_search_equals_exhaustive(const LoadedScenario& loaded,
                                            const PlanSpaceOptions& space,
                                            PlanObjective objective = PlanObjective::step) {
  PlanSearchOptions options;
  options.top = 3;
  options.objective = objective;
  const auto searched = plan(loaded, space, options);
  options.exhaustive = true;
  const auto exhaustive = plan(loaded, space, options);
  EXPECT_FALSE(exhaustive.search.ranking.empty());
  EXPECT_EQ(listed(searched.search, searched.search.ranking, 3),
            listed(exhaustive.search, exhaustive.search.ranking, 3));
  EXPECT_EQ(listed(searched.search, searched.search.pareto, 100),
            listed(exhaustive.search, exhaustive.search.pareto, 100));
  EXPECT_LE(searched.search.simulated, exhaustive.search.simulated);
  std::size_t pipelined = 0;
  for (const auto& outcome : exhaustive.search.outcomes) {
    if (outcome.status != CandidateStatus::evaluated) continue;
    pipelined += outcome.screened.candidate.strategy.micro_batches > 1;
    // The bound the search prunes with (compute and communication) holds for every simulation.
    EXPECT_LE(outcome.screened.step_lower_bound_seconds, outcome.result.step_seconds)
        << describe(outcome.screened.candidate.strategy);
  }
  std::cout << loaded.scenario.name << ": " << searched.search.outcomes.size() << " candidates, "
            << searched.search.simulated << " simulated by the search, "
            << exhaustive.search.simulated << " exhaustively; " << pipelined
            << " pipelined candidates evaluated\n";
  return pipelined;
}

LoadedScenario cosmoflow128(const std::string& platform = "{preset: lassen}") {
  return load_scenario_text(R"(
name: plan-cosmoflow-128
model: {zoo: cosmoflow, options: {width: 128}, mini_batch: 1}
parallelism: {data: 8}
platform: )" + platform + "\n",
                            "plan.yaml", "");
}

TEST(PlanSearchSim, EqualsExhaustiveEvaluationOnCosmoFlow) {
  const auto loaded = cosmoflow128();
  auto space = space_at(loaded, 16);
  space.max_model_degree = 2;
  EXPECT_GT(expect_search_equals_exhaustive(loaded, space), 0u);
}

TEST(PlanSearchSim, EqualsExhaustiveEvaluationWithEveryOffloadPolicyAndAMemoryLimit) {
  auto loaded = cosmoflow128();
  auto space = space_at(loaded, 8);
  space.every_offload_policy = true;
  space.max_model_degree = 2;
  apply_memory_limit(loaded, 2.0 * 1024 * 1024 * 1024);
  EXPECT_GT(expect_search_equals_exhaustive(loaded, space), 0u);
}

TEST(PlanSearchSim, EqualsExhaustiveEvaluationOnResNet50ByTimeToTrain) {
  const auto loaded = load_scenario_text(R"(
name: plan-resnet50
model: {zoo: resnet50, mini_batch: 32}
parallelism: {data: 8}
platform: {preset: dgx1_v100}
)",
                                         "plan.yaml", "");
  auto space = space_at(loaded, 16);
  space.global_batch.reset();
  space.mini_batch = 32;
  space.max_model_degree = 2;
  space.max_spatial_parts = 4;
  EXPECT_GT(expect_search_equals_exhaustive(loaded, space, PlanObjective::time_to_train), 0u);
}

TEST(PlanSearchSim, CandidatesWithOneSignatureSimulateAlike) {
  const auto loaded = cosmoflow128();
  auto space = space_at(loaded, 8);
  space.max_model_degree = 2;
  space.every_offload_policy = true;
  const auto screened = screen_candidates(loaded, enumerate_candidates(loaded, space), nullptr);
  std::map<std::string, std::vector<const ScreenedCandidate*>> by_signature;
  for (const auto& c : screened) {
    if (c.valid && c.fits) by_signature[c.simulation_signature].push_back(&c);
  }
  // Up to 6 pairs with one micro-batch and 4 pipelined ones.
  std::vector<const ScreenedCandidate*> pairs;
  std::size_t pipelined = 0;
  for (const auto& [signature, group] : by_signature) {
    const bool pipeline = group.front()->candidate.strategy.micro_batches > 1;
    if (group.size() < 2 || (pipeline ? pipelined >= 4 : pairs.size() - 2 * pipelined >= 12)) {
      continue;
    }
    pairs.push_back(group.front());
    pairs.push_back(group.back());
    pipelined += pipeline;
  }
  ASSERT_GE(pairs.size(), 4u) << "expected permuted grids and offload policies to coincide";
  EXPECT_GT(pipelined, 0u) << "expected pipelined candidates to coincide too";
  const auto rows = sim::simulate_candidates(loaded, pairs, {}, 2);
  for (std::size_t i = 0; i < rows.size(); i += 2) {
    SCOPED_TRACE(describe(pairs[i]->candidate.strategy) + " against " +
                 describe(pairs[i + 1]->candidate.strategy));
    ASSERT_TRUE(rows[i] && rows[i + 1]);  // no deadline: every candidate has its row
    EXPECT_EQ(rows[i]->status, PointStatus::ok);
    EXPECT_EQ(rows[i]->step_seconds, rows[i + 1]->step_seconds);
    EXPECT_EQ(rows[i]->breakdown, rows[i + 1]->breakdown);
    EXPECT_EQ(rows[i]->average_memory_bytes, rows[i + 1]->average_memory_bytes);
  }
}

TEST(PlanSearchSim, TheSameInputsGiveTheSameRankingWithAnyNumberOfChildren) {
  const auto loaded = cosmoflow128();
  auto space = space_at(loaded, 8);
  space.max_model_degree = 2;
  PlanSearchOptions options;
  const auto one = plan(loaded, space, options, 1);
  const auto again = plan(loaded, space, options, 1);
  const auto two = plan(loaded, space, options, 2);
  for (const auto* other : {&again, &two}) {
    EXPECT_EQ(one.search.ranking, other->search.ranking);
    EXPECT_EQ(one.search.pareto, other->search.pareto);
    ASSERT_EQ(one.search.outcomes.size(), other->search.outcomes.size());
    for (std::size_t i = 0; i < one.search.outcomes.size(); ++i) {
      EXPECT_EQ(one.search.outcomes[i].result, other->search.outcomes[i].result);
    }
  }
}

// Known answers, found by the search rather than written into it.

TEST(PlanSearchSim, CosmoFlow512NeedsASpatialSplitOn16GBGpus) {
  const auto loaded = load_scenario_text(R"(
name: plan-cosmoflow-512
model: {zoo: cosmoflow, options: {width: 512}, mini_batch: 1}
parallelism: {data: 4}
platform: {preset: lassen}
)",
                                         "plan.yaml", "");
  // One sample per replica on 4 GPUs: one replica split 4 ways, two split 2 ways, or four whole.
  // The split may be spatial or by channels (tensor parallelism), and a spatial one wins.
  auto space = space_at(loaded, 4);
  space.global_batch.reset();
  space.mini_batch = 1;
  space.every_offload_policy = true;
  const auto planned = plan(loaded, space, {});
  for (const auto& outcome : planned.search.outcomes) {
    const auto& s = outcome.screened.candidate.strategy;
    if (s.config().spatial_parts() == 1 && s.model_degree == 1 && s.tensor == 1) {
      EXPECT_EQ(outcome.status, CandidateStatus::over_memory) << describe(s);
    }
  }
  ASSERT_FALSE(planned.search.ranking.empty());
  const auto& best = planned.search.outcomes[planned.search.ranking.front()];
  EXPECT_GT(best.screened.candidate.strategy.config().spatial_parts(), 1)
      << describe(best.screened.candidate.strategy);
}

// vDNN's case: a whole batch of 256 on one 12 GB GPU does not fit, even offloading every map
// (12.55 GiB at best in this memory model: docs/measurements/2026-11-24-vdnn.md); on two GPUs
// the batch needs a split (of its samples, its stages or its channels), with or without
// offloading.
TEST(PlanSearchSim, Vgg16AtBatch256NeedsOffloadingOrASplitOnA12GBGpu) {
  auto loaded = load_scenario_text(R"(
name: plan-vgg16
model: {zoo: vgg16, mini_batch: 256, optimizer: momentum}
platform: {preset: titanx_workstation}
)",
                                   "plan.yaml", "");
  loaded.cluster.nodes = 2;  // two such workstations
  auto space = space_at(loaded, 2);
  space.global_batch.reset();
  space.mini_batch = 256;
  space.every_offload_policy = true;
  const auto planned = plan(loaded, space, {});
  for (const auto& outcome : planned.search.outcomes) {
    const auto& s = outcome.screened.candidate.strategy;
    if (s.config().spatial_parts() == 1 && s.model_degree == 1 && s.tensor == 1) {
      EXPECT_EQ(outcome.status, CandidateStatus::over_memory) << describe(s);
    }
  }
  ASSERT_FALSE(planned.search.ranking.empty());
  const auto& best = planned.search.outcomes[planned.search.ranking.front()].screened;
  const auto& s = best.candidate.strategy;
  EXPECT_TRUE(s.config().spatial_parts() > 1 || s.model_degree > 1 || s.tensor > 1) << describe(s);
  EXPECT_EQ(s.data, 1);
}

TEST(PlanSearchSim, PlainDataParallelismWinsForResNet50AtFewGpus) {
  const auto loaded = load_scenario_text(R"(
name: plan-resnet50-dp
model: {zoo: resnet50, mini_batch: 64}
parallelism: {data: 8}
platform: {preset: dgx1_v100}
)",
                                         "plan.yaml", "");
  auto space = space_at(loaded, 8);
  space.max_spatial_parts = 8;
  const auto planned = plan(loaded, space, {});
  ASSERT_FALSE(planned.search.ranking.empty());
  const auto& best = planned.search.outcomes[planned.search.ranking.front()].screened;
  EXPECT_EQ(best.candidate.strategy.data, 8) << describe(best.candidate.strategy);
  EXPECT_EQ(best.candidate.strategy.model_degree, 1);
  EXPECT_EQ(best.applied_offload.policy, OffloadPolicy::none);
}

}  // namespace
}  // namespace tessera
