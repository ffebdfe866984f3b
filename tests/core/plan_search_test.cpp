// The branch and bound of `tessera plan` (plan_search.hpp) on made-up candidates whose "true"
// steps a fake evaluator knows: pruning never changes the best `top` or the Pareto front, waves
// decide what is simulated, identical simulations run once, and the output is deterministic.
#include <gtest/gtest.h>

#include <random>

#include "tessera/core/plan_search/plan_explain.hpp"
#include "tessera/core/plan_search/plan_search.hpp"
#include "test_support.hpp"

namespace tessera {
namespace {

struct Truth {
  double step = 0;
  double memory = 0;
};

// `count` valid candidates with random steps and memory, and lower bounds below their steps.
std::vector<ScreenedCandidate> made_up(std::size_t count, unsigned seed,
                                       std::vector<Truth>& truth) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> step(1.0, 3.0), memory(1e9, 8e9), slack(0.3, 1.0);
  std::vector<ScreenedCandidate> candidates;
  truth.clear();
  for (std::size_t i = 0; i < count; ++i) {
    ScreenedCandidate c;
    c.candidate.index = i;
    c.candidate.strategy.data = static_cast<std::int64_t>(i + 1);
    c.candidate.strategy.spatial_grid = {1};
    c.valid = true;
    c.fits = true;
    truth.push_back({step(random), memory(random)});
    c.peak_memory_bytes = truth.back().memory;
    c.capacity_bytes = 16e9;
    c.step_lower_bound_seconds = truth.back().step * slack(random);
    c.simulation_signature = std::to_string(i);
    candidates.push_back(c);
  }
  return candidates;
}

WaveEvaluator evaluator(const std::vector<Truth>& truth, std::size_t& calls,
                        std::size_t& simulated) {
  return [&truth, &calls, &simulated](const std::vector<const ScreenedCandidate*>& wave,
                                      const SearchDeadline&) {
    ++calls;
    std::vector<std::optional<PointResult>> rows;
    for (const auto* c : wave) {
      PointResult row;
      row.backend = "sim";
      const auto& t = truth.at(c->candidate.index);
      row.step_seconds = t.step;
      row.peak_memory_bytes = t.memory;
      row.note = "made up";
      rows.push_back(row);
      ++simulated;
    }
    return rows;
  };
}

std::vector<std::size_t> indices(const PlanSearchResult& search, const std::vector<std::size_t>& at,
                                 std::size_t most) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < std::min(most, at.size()); ++i) {
    out.push_back(search.outcomes[at[i]].screened.candidate.index);
  }
  return out;
}

TEST(PlanSearch, PruningKeepsTheBestAndTheParetoFrontOfExhaustiveEvaluation) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    std::vector<Truth> truth;
    const auto candidates = made_up(200, seed, truth);
    PlanSearchOptions options;
    options.top = 5;
    std::size_t calls = 0, simulated = 0;
    const auto pruned = search_plan(candidates, options, evaluator(truth, calls, simulated));
    options.exhaustive = true;
    std::size_t all_calls = 0, all_simulated = 0;
    const auto exhaustive =
        search_plan(candidates, options, evaluator(truth, all_calls, all_simulated));
    EXPECT_EQ(all_simulated, 200u);
    EXPECT_LT(simulated, 200u) << "seed " << seed << ": the bound pruned nothing";
    EXPECT_EQ(indices(pruned, pruned.ranking, 5), indices(exhaustive, exhaustive.ranking, 5))
        << "seed " << seed;
    EXPECT_EQ(indices(pruned, pruned.pareto, 1000), indices(exhaustive, exhaustive.pareto, 1000))
        << "seed " << seed;
  }
}

// Without the Pareto front to prove, fewer candidates are simulated and the best are the same.
TEST(PlanSearch, ProvingTheBestOnlySimulatesNoMoreAndKeepsTheBest) {
  std::size_t fewer = 0;
  for (unsigned seed = 1; seed <= 20; ++seed) {
    std::vector<Truth> truth;
    const auto candidates = made_up(200, seed, truth);
    PlanSearchOptions options;
    options.top = 5;
    std::size_t calls = 0, with_front = 0;
    const auto pareto = search_plan(candidates, options, evaluator(truth, calls, with_front));
    options.pareto = false;
    std::size_t best_calls = 0, best_only = 0;
    const auto best = search_plan(candidates, options, evaluator(truth, best_calls, best_only));
    EXPECT_LE(best_only, with_front) << "seed " << seed;
    fewer += best_only < with_front ? 1 : 0;
    EXPECT_EQ(indices(best, best.ranking, 5), indices(pareto, pareto.ranking, 5))
        << "seed " << seed;
    for (const auto& outcome : best.outcomes) {
      if (outcome.status != CandidateStatus::bounded) continue;
      EXPECT_FALSE(test::contains(outcome.reason, "less memory")) << outcome.reason;
    }
  }
  EXPECT_GT(fewer, 0u) << "the front never cost a simulation in 20 made-up spaces";
}

TEST(PlanSearch, WavesDecideWhatIsSimulatedAndTheSameInputsGiveTheSameOutput) {
  std::vector<Truth> truth;
  const auto candidates = made_up(100, 7, truth);
  PlanSearchOptions options;
  options.wave = 4;
  std::size_t calls = 0, simulated = 0;
  const auto first = search_plan(candidates, options, evaluator(truth, calls, simulated));
  EXPECT_LE(calls, (simulated + 3) / 4 + 1);
  std::size_t again_calls = 0, again_simulated = 0;
  const auto second =
      search_plan(candidates, options, evaluator(truth, again_calls, again_simulated));
  EXPECT_EQ(simulated, again_simulated);
  ASSERT_EQ(first.outcomes.size(), second.outcomes.size());
  for (std::size_t i = 0; i < first.outcomes.size(); ++i) {
    EXPECT_EQ(first.outcomes[i].status, second.outcomes[i].status);
    EXPECT_EQ(first.outcomes[i].result, second.outcomes[i].result);
  }
  EXPECT_EQ(first.ranking, second.ranking);
}

TEST(PlanSearch, TheBudgetStopsTheSearchAfterTheFirstWave) {
  std::vector<Truth> truth;
  const auto candidates = made_up(50, 11, truth);
  PlanSearchOptions options;
  options.wave = 4;
  options.budget_seconds = 1e-9;
  std::size_t calls = 0, simulated = 0;
  const auto search = search_plan(candidates, options, evaluator(truth, calls, simulated));
  EXPECT_EQ(calls, 1u);
  EXPECT_EQ(simulated, 4u);
  EXPECT_TRUE(search.budget_ran_out);
  EXPECT_EQ(search.ranking.size(), 4u);
  std::size_t not_reached = 0;
  for (const auto& outcome : search.outcomes) {
    if (outcome.status != CandidateStatus::not_reached) continue;
    ++not_reached;
    EXPECT_TRUE(outcome.decided());
    EXPECT_TRUE(test::contains(outcome.reason, "time budget")) << outcome.reason;
  }
  EXPECT_EQ(not_reached, 46u);
}

// An evaluator that could not finish some candidates by the deadline leaves them unreached, and
// the search stops there; the first wave gets no deadline.
TEST(PlanSearch, CandidatesCutByTheDeadlineAreNotReachedAndTheSearchStops) {
  std::vector<Truth> truth;
  const auto candidates = made_up(20, 7, truth);
  PlanSearchOptions options;
  options.wave = 4;
  options.exhaustive = true;
  options.budget_seconds = 3600;
  std::vector<bool> had_deadline;
  const auto search = search_plan(
      candidates, options,
      [&](const std::vector<const ScreenedCandidate*>& wave, const SearchDeadline& deadline) {
        had_deadline.push_back(deadline.has_value());
        std::vector<std::optional<PointResult>> rows;
        for (const auto* c : wave) {
          rows.emplace_back();
          // The second wave finishes its first two candidates only.
          if (had_deadline.size() == 2 && rows.size() > 2) continue;
          rows.back().emplace();
          rows.back()->step_seconds = truth.at(c->candidate.index).step;
          rows.back()->peak_memory_bytes = truth.at(c->candidate.index).memory;
        }
        return rows;
      });
  ASSERT_EQ(had_deadline.size(), 2u);
  EXPECT_FALSE(had_deadline[0]);
  EXPECT_TRUE(had_deadline[1]);
  EXPECT_TRUE(search.budget_ran_out);
  EXPECT_EQ(search.simulated, 6u);
  EXPECT_EQ(search.ranking.size(), 6u);
  std::size_t not_reached = 0;
  for (const auto& outcome : search.outcomes) {
    if (outcome.status != CandidateStatus::not_reached) continue;
    ++not_reached;
    EXPECT_TRUE(test::contains(outcome.reason, "time budget")) << outcome.reason;
  }
  EXPECT_EQ(not_reached, 14u);
}

// The budget counts from when it began (the command's start, before screening), not from the
// search's own start.
TEST(PlanSearch, TheBudgetCountsFromItsStart) {
  std::vector<Truth> truth;
  const auto candidates = made_up(50, 11, truth);
  PlanSearchOptions options;
  options.wave = 4;
  options.budget_seconds = 60;
  options.budget_start = std::chrono::steady_clock::now() - std::chrono::hours(1);
  std::size_t calls = 0, simulated = 0;
  const auto search = search_plan(candidates, options, evaluator(truth, calls, simulated));
  EXPECT_EQ(calls, 1u);  // the first wave only: the hour before the search spent the budget
  EXPECT_TRUE(search.budget_ran_out);
  for (const auto& outcome : search.outcomes) {
    if (outcome.status != CandidateStatus::not_reached) continue;
    EXPECT_TRUE(test::contains(outcome.reason, "time budget of 60.000 s")) << outcome.reason;
  }
}

// Ranks sharing the waves stop on rank 0's clock: the agreed time decides, not this process's.
TEST(PlanSearch, TheBudgetGoesByTheAgreedTime) {
  std::vector<Truth> truth;
  const auto candidates = made_up(50, 11, truth);
  PlanSearchOptions options;
  options.wave = 4;
  options.budget_seconds = 1e-9;  // long over on this process's clock after the first wave
  std::vector<double> own_seconds;
  options.agreed_seconds = [&own_seconds](double own) {
    own_seconds.push_back(own);
    return own_seconds.size() < 3 ? 0.0 : 1.0;  // rank 0's clock: over from the third wave on
  };
  std::size_t calls = 0, simulated = 0;
  const auto search = search_plan(candidates, options, evaluator(truth, calls, simulated));
  EXPECT_EQ(calls, 2u);
  EXPECT_TRUE(search.budget_ran_out);
  ASSERT_EQ(own_seconds.size(), 3u);
  EXPECT_GT(own_seconds.back(), 0);  // what this process measured, passed on to be agreed
}

TEST(PlanSearch, InvalidAndOversizedCandidatesAreNeverSimulated) {
  std::vector<Truth> truth;
  auto candidates = made_up(6, 3, truth);
  candidates[1].valid = false;
  candidates[1].invalid_reason = "parallelism.spatial.grid: does not divide";
  candidates[2].fits = false;
  std::size_t calls = 0, simulated = 0;
  PlanSearchOptions options;
  options.exhaustive = true;
  const auto search = search_plan(candidates, options, evaluator(truth, calls, simulated));
  EXPECT_EQ(simulated, 4u);
  EXPECT_EQ(search.outcomes[1].status, CandidateStatus::invalid);
  EXPECT_EQ(search.outcomes[2].status, CandidateStatus::over_memory);
  EXPECT_EQ(search.outcomes[1].result.status, PointStatus::skipped);
  EXPECT_TRUE(test::contains(search.outcomes[1].result.note, "does not divide"));
  const auto pruned = explain_pruned(search, 3);
  EXPECT_TRUE(test::contains(pruned, "invalid (1)")) << pruned;
  EXPECT_TRUE(test::contains(pruned, "over memory (1)")) << pruned;
}

TEST(PlanSearch, IdenticalSimulationsRunOnce) {
  std::vector<Truth> truth;
  auto candidates = made_up(6, 5, truth);
  for (auto& c : candidates) c.simulation_signature = "same";
  std::size_t calls = 0, simulated = 0;
  PlanSearchOptions options;
  options.exhaustive = true;
  const auto search = search_plan(candidates, options, evaluator(truth, calls, simulated));
  EXPECT_EQ(simulated, 1u);
  EXPECT_EQ(search.shared, 5u);
  for (const auto& outcome : search.outcomes) {
    EXPECT_EQ(outcome.status, CandidateStatus::evaluated);
    // Their own memory plans, one simulation's step.
    EXPECT_EQ(outcome.result.peak_memory_bytes, outcome.screened.peak_memory_bytes);
    EXPECT_EQ(outcome.result.step_seconds,
              search.outcomes[search.ranking.front()].result.step_seconds);
  }
}

TEST(PlanSearch, TheExplanationNamesTheBreakdownPartThatDiffers) {
  std::vector<Truth> truth;
  const auto candidates = made_up(2, 9, truth);
  PlanSearchOptions options;
  options.exhaustive = true;
  const auto search =
      search_plan(candidates, options,
                  [](const std::vector<const ScreenedCandidate*>& wave, const SearchDeadline&) {
                    std::vector<std::optional<PointResult>> rows;
                    for (const auto* c : wave) {
                      PointResult row;
                      row.breakdown.compute_seconds = 1;
                      row.breakdown.halo_seconds = c->candidate.index == 0 ? 0.5 : 0.1;
                      row.step_seconds = row.breakdown.total();
                      rows.push_back(row);
                    }
                    return rows;
                  });
  const auto text = explain_winner(search, options);
  EXPECT_TRUE(test::contains(text, "Why candidate 1 beats candidate 0")) << text;
  EXPECT_TRUE(test::contains(text, "halo -400.000 ms")) << text;
  EXPECT_TRUE(test::contains(text, "the winner gains most in halo")) << text;
}

TEST(PlanSearch, ObjectivesScoreTheStepTimeToTrainAndEnergyPerSample) {
  PointResult row;
  row.gpus = 8;
  row.global_batch = 64;
  row.step_seconds = 0.5;
  row.time_to_train_seconds = 3600;
  PlanSearchOptions options;
  EXPECT_DOUBLE_EQ(objective_of(row, options), 0.5 / 64);
  options.objective = PlanObjective::time_to_train;
  EXPECT_DOUBLE_EQ(objective_of(row, options), 3600);
  options.objective = PlanObjective::samples_per_joule;
  options.gpu_power_watts = 300;
  EXPECT_DOUBLE_EQ(objective_of(row, options), 8 * 300 * 0.5 / 64);  // joules per sample
  EXPECT_EQ(format_objective(8 * 300 * 0.5 / 64, options.objective), "0.05333 samples/J");

  // Time to train's bound: the steps to the target at the batch, each at least the step's bound.
  options.objective = PlanObjective::time_to_train;
  options.efficiency.target = TrainingTarget::critical_batch;
  options.efficiency.critical_batch = 64;
  options.efficiency.min_steps = 1000;
  options.efficiency.epoch_samples = 1e6;
  ScreenedCandidate candidate;
  candidate.candidate.strategy.data = 8;
  candidate.candidate.strategy.mini_batch = 8;
  candidate.candidate.strategy.spatial_grid = {1};
  candidate.step_lower_bound_seconds = 0.25;
  EXPECT_DOUBLE_EQ(objective_bound(candidate, options), 0.25 * 1000 * (1 + 64.0 / 64));
}

TEST(PlanExplain, ALongSearchIsEstimatedFromTheSimulationsSoFar) {
  // Too early to say, or short.
  EXPECT_EQ(long_search_warning(64000, kSimulationsToEstimate - 1, 15), "");
  EXPECT_EQ(long_search_warning(100, 20, 20), "");  // 1 s each: 100 s to go
  EXPECT_EQ(long_search_warning(0, 20, 20), "");
  // 64,000 at 1 s each: 17.8 h.
  const auto hours = long_search_warning(64000, 20, 20);
  EXPECT_TRUE(test::contains(hours, "64000 candidates undecided")) << hours;
  EXPECT_TRUE(test::contains(hours, "1.0 s each")) << hours;
  EXPECT_TRUE(test::contains(hours, "up to 17.8 h")) << hours;
  EXPECT_TRUE(test::contains(hours, "--budget-s")) << hours;
  // 1,000 at 1 s each: 16.7 min.
  EXPECT_TRUE(test::contains(long_search_warning(1000, 16, 16), "up to 16.7 min"));
}

}  // namespace
}  // namespace tessera
