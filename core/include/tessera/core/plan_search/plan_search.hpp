#pragma once
// The search of `tessera plan`: screened candidates (plan_screen.hpp) are simulated in waves, in
// the order of their lower bounds, and a candidate is skipped (branch and bound) only when it
// cannot be among the best `top`, nor, with `pareto`, on the Pareto front of objective against
// memory:
//   - at least `top` simulated candidates already beat its bound, and
//   - with `pareto`, one of those uses no more memory than it does.
// So the ranking's first `top` entries, and with `pareto` the whole Pareto front, equal those of
// simulating every valid candidate that fits (without it the front is drawn from the simulated
// ones). Pruning is decided only between waves, from the results of
// the waves before: which candidates are simulated depends on the wave size, never on how many
// processes or MPI ranks simulate a wave, so every way of running gives the same output.
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/plan_search/plan_screen.hpp"
#include "tessera/core/result/result_schema.hpp"
#include "tessera/core/time_to_train/time_to_train.hpp"

namespace tessera {

// What is minimised: the step per sample of the global batch (the step itself where the global
// batch is fixed), the time to train to the scenario's target, or the GPUs' energy per sample.
enum class PlanObjective { step, time_to_train, samples_per_joule };
std::string to_string(PlanObjective objective);

enum class CandidateStatus {
  evaluated,    // simulated (or kept from an earlier run)
  invalid,      // the split does not fit the model
  over_memory,  // its memory plan exceeds the GPU's memory or the limit
  bounded,      // its lower bound cannot reach the best or the Pareto front
  not_reached,  // the time budget ran out first
  failed,       // the simulation failed
};
std::string to_string(CandidateStatus status);

struct CandidateOutcome {
  ScreenedCandidate screened;
  CandidateStatus status = CandidateStatus::not_reached;
  std::string reason;      // why it was pruned or failed, in words
  PointResult result;      // the result row written for it (pruned ones: status skipped)
  double score = 0;        // the objective, lower is better (evaluated ones)
  double bound_score = 0;  // the objective at the step's lower bound
  bool resumed = false;    // kept from an earlier run's results
  // Not simulated itself: the simulation of this candidate (same simulation signature) gave
  // its step and breakdown.
  std::optional<std::size_t> same_simulation_as;

  // Whether the search has got to it yet (a running search's later candidates have not).
  bool decided() const { return status != CandidateStatus::not_reached || !reason.empty(); }
};

struct PlanSearchOptions {
  PlanObjective objective = PlanObjective::step;
  std::size_t top = 5;
  std::size_t wave = 8;     // candidates simulated between pruning decisions
  bool exhaustive = false;  // no bound pruning: simulate every valid candidate that fits
  bool pareto = true;       // also keep every candidate that may be on the Pareto front
  // > 0: stop after this much time; the first wave runs whole, so that a budget too small still
  // gives an answer, and later ones are cut where the budget ends (their evaluator's deadline).
  double budget_seconds = 0;
  // When the budget began (a command's start, its screening included); none: when the search
  // began.
  std::optional<std::chrono::steady_clock::time_point> budget_start;
  // With a budget: the seconds the search has run, read before every wave. Processes that share
  // the waves must agree on it (rank 0's clock), or one would stop while another waits for it.
  // Empty: this process's steady clock since the search began.
  std::function<double(double own_seconds)> agreed_seconds;
  double gpu_power_watts = 0;        // samples_per_joule: every GPU draws this (its TDP)
  StatisticalEfficiency efficiency;  // time_to_train: steps to the target per global batch
  std::string scenario_name;         // the rows' scenario
  nlohmann::json inputs;             // the digests every row carries (run_inputs.hpp)
};

struct PlanSearchResult {
  std::vector<CandidateOutcome> outcomes;  // one per candidate, by candidate index
  std::vector<std::size_t> ranking;        // evaluated ones, best first (indices into outcomes)
  std::vector<std::size_t> pareto;         // the front of objective against memory, best first
  std::size_t simulated = 0;
  std::size_t resumed = 0;
  std::size_t shared = 0;  // evaluated by another candidate's identical simulation
  bool budget_ran_out = false;
  double wall_seconds = 0;
};

// Simulates the candidates of one wave; results in the wave's order. A candidate it did not
// finish by `deadline` (where the search's time budget ends; none: no limit) has no result.
// May throw.
using SearchDeadline = std::optional<std::chrono::steady_clock::time_point>;
using WaveEvaluator = std::function<std::vector<std::optional<PointResult>>(
    const std::vector<const ScreenedCandidate*>& wave, const SearchDeadline& deadline)>;
// A result kept from an earlier run for this candidate, or null.
using StoredResultLookup = std::function<const PointResult*(const PlanCandidate& candidate)>;
// After every wave (and once at the end): the search so far, e.g. to write it down.
using WaveFinished = std::function<void(const PlanSearchResult& so_far, bool last)>;

PlanSearchResult search_plan(std::vector<ScreenedCandidate> candidates,
                             const PlanSearchOptions& options, const WaveEvaluator& evaluate,
                             const StoredResultLookup& stored = {},
                             const WaveFinished& finished = {});

// The objective of a result row, and of a step-time lower bound, under `options`.
double objective_of(const PointResult& result, const PlanSearchOptions& options);
double objective_bound(const ScreenedCandidate& candidate, const PlanSearchOptions& options);

// The ranking and the Pareto front of the evaluated outcomes (search_plan fills them; exposed
// for tests that rank an exhaustive evaluation the same way).
std::vector<std::size_t> rank_outcomes(const std::vector<CandidateOutcome>& outcomes);
std::vector<std::size_t> pareto_front(const std::vector<CandidateOutcome>& outcomes);

// The row written for a candidate: its simulated result, or a skipped row saying why not.
PointResult candidate_row(const CandidateOutcome& outcome, const PlanSearchOptions& options);

}  // namespace tessera
