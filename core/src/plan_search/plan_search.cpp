#include "tessera/core/plan_search/plan_search.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "tessera/core/common/quantity.hpp"
#include "tessera/core/result/point_identity.hpp"
#include "tessera/core/result/point_time_to_train.hpp"

namespace tessera {

std::string to_string(PlanObjective objective) {
  switch (objective) {
    case PlanObjective::step:
      return "step";
    case PlanObjective::time_to_train:
      return "time-to-train";
    case PlanObjective::samples_per_joule:
      return "samples-per-joule";
  }
  return "?";
}

std::string to_string(CandidateStatus status) {
  switch (status) {
    case CandidateStatus::evaluated:
      return "evaluated";
    case CandidateStatus::invalid:
      return "invalid";
    case CandidateStatus::over_memory:
      return "over memory";
    case CandidateStatus::bounded:
      return "bounded";
    case CandidateStatus::not_reached:
      return "not reached";
    case CandidateStatus::failed:
      return "failed";
  }
  return "?";
}

namespace {

double objective_at(double step_seconds, std::int64_t gpus, std::int64_t global_batch,
                    double steps_to_target, const PlanSearchOptions& options) {
  switch (options.objective) {
    case PlanObjective::step:
      return step_seconds / static_cast<double>(global_batch);
    case PlanObjective::time_to_train:
      return step_seconds * steps_to_target;
    case PlanObjective::samples_per_joule:
      return static_cast<double>(gpus) * options.gpu_power_watts * step_seconds /
             static_cast<double>(global_batch);
  }
  return step_seconds;
}

double steps_at(std::int64_t global_batch, const PlanSearchOptions& options) {
  if (options.objective != PlanObjective::time_to_train) return 0;
  return steps_to_target(options.efficiency, global_batch).steps;
}

bool ranks_before(const CandidateOutcome& a, const CandidateOutcome& b) {
  if (a.score != b.score) return a.score < b.score;
  return a.screened.candidate.index < b.screened.candidate.index;
}

// Whether `pending` can still be among the best `top`, or with `pareto` on the Pareto front,
// given what the waves so far simulated (see the header).
bool may_matter(const CandidateOutcome& pending, const std::vector<const CandidateOutcome*>& done,
                std::size_t top, bool pareto, std::string& reason) {
  std::size_t better = 0;
  const CandidateOutcome* dominating = nullptr;
  for (const auto* outcome : done) {
    if (outcome->score >= pending.bound_score) continue;
    ++better;
    if ((!pareto || outcome->result.peak_memory_bytes <= pending.screened.peak_memory_bytes) &&
        (!dominating || ranks_before(*outcome, *dominating))) {
      dominating = outcome;
    }
  }
  if (better < top || !dominating) return true;
  reason = "its step is at least " + format_seconds(pending.screened.step_lower_bound_seconds) +
           "; " + std::to_string(better) + " simulated candidates do better";
  if (pareto) {
    reason += ", and candidate " + std::to_string(dominating->screened.candidate.index) +
              " also needs less memory (" + format_bytes(dominating->result.peak_memory_bytes) +
              " per GPU against " + format_bytes(pending.screened.peak_memory_bytes) + ")";
  }
  return false;
}

// The simulated result of `twin` for `outcome`, which plays the same simulation: its step,
// breakdown and memory over time, with its own memory plan's peak and strategy.
PointResult shared_result(const CandidateOutcome& twin, const CandidateOutcome& outcome) {
  PointResult row = twin.result;
  const auto& screened = outcome.screened;
  row.peak_memory_bytes = screened.peak_memory_bytes;
  row.device_capacity_bytes = screened.capacity_bytes;
  row.fits = screened.fits;
  const auto twin_note = row.note.find("; ");
  row.note = "strategy: " + describe(screened.candidate.strategy) +
             "; the same simulation as candidate " + std::to_string(twin.screened.candidate.index) +
             (twin_note == std::string::npos ? std::string() : row.note.substr(twin_note));
  return row;
}

void finish(PlanSearchResult& result) {
  result.ranking = rank_outcomes(result.outcomes);
  result.pareto = pareto_front(result.outcomes);
}

}  // namespace

double objective_of(const PointResult& result, const PlanSearchOptions& options) {
  if (options.objective == PlanObjective::time_to_train) return result.time_to_train_seconds;
  return objective_at(result.step_seconds, result.gpus, result.global_batch, 0, options);
}

double objective_bound(const ScreenedCandidate& candidate, const PlanSearchOptions& options) {
  const auto& strategy = candidate.candidate.strategy;
  return objective_at(candidate.step_lower_bound_seconds, strategy.gpus(), strategy.global_batch(),
                      steps_at(strategy.global_batch(), options), options);
}

std::vector<std::size_t> rank_outcomes(const std::vector<CandidateOutcome>& outcomes) {
  std::vector<std::size_t> ranking;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    if (outcomes[i].status == CandidateStatus::evaluated) ranking.push_back(i);
  }
  std::sort(ranking.begin(), ranking.end(),
            [&](std::size_t a, std::size_t b) { return ranks_before(outcomes[a], outcomes[b]); });
  return ranking;
}

std::vector<std::size_t> pareto_front(const std::vector<CandidateOutcome>& outcomes) {
  auto order = rank_outcomes(outcomes);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (outcomes[a].score != outcomes[b].score) return outcomes[a].score < outcomes[b].score;
    return outcomes[a].result.peak_memory_bytes < outcomes[b].result.peak_memory_bytes;
  });
  std::vector<std::size_t> front;
  for (auto i : order) {
    if (front.empty() ||
        outcomes[i].result.peak_memory_bytes < outcomes[front.back()].result.peak_memory_bytes) {
      front.push_back(i);
    }
  }
  return front;
}

PointResult candidate_row(const CandidateOutcome& outcome, const PlanSearchOptions& options) {
  const auto& strategy = outcome.screened.candidate.strategy;
  const std::string what = "strategy: " + describe(strategy);
  PointResult row;
  if (outcome.status == CandidateStatus::evaluated || outcome.status == CandidateStatus::failed) {
    row = outcome.result;
    if (!row.note.starts_with("strategy: ")) row.note = what + "; " + row.note;
    if (outcome.status == CandidateStatus::failed) {
      row.status = PointStatus::failed;
      if (row.note.find(outcome.reason) == std::string::npos) row.note += "; " + outcome.reason;
    }
  } else {
    row.status = PointStatus::skipped;
    row.note = "pruned (" + to_string(outcome.status) + "): " + outcome.reason + "; " + what;
    row.peak_memory_bytes = outcome.screened.peak_memory_bytes;
    row.device_capacity_bytes = outcome.screened.capacity_bytes;
    row.fits = outcome.screened.valid && outcome.screened.fits;
    row.memory_provenance = outcome.screened.valid ? Provenance::estimated : Provenance::none;
  }
  set_point_identity(row, options.scenario_name,
                     static_cast<std::int64_t>(outcome.screened.candidate.index), "sim",
                     strategy.config());
  if (options.efficiency.target != TrainingTarget::none) {
    fill_time_to_train(row, options.efficiency);
  }
  row.inputs = options.inputs;
  if (row.inputs.is_object()) row.inputs["strategy"] = strategy_key(strategy);
  return row;
}

PlanSearchResult search_plan(std::vector<ScreenedCandidate> candidates,
                             const PlanSearchOptions& options, const WaveEvaluator& evaluate,
                             const StoredResultLookup& stored, const WaveFinished& finished) {
  const auto start = std::chrono::steady_clock::now();
  PlanSearchResult result;
  result.outcomes.resize(candidates.size());
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].candidate.index != i) {
      throw std::logic_error("search_plan: candidates must be given in index order");
    }
    auto& outcome = result.outcomes[i];
    outcome.screened = std::move(candidates[i]);
    const auto& screened = outcome.screened;
    if (!screened.valid) {
      outcome.status = CandidateStatus::invalid;
      outcome.reason = screened.invalid_reason;
    } else if (!screened.fits) {
      outcome.status = CandidateStatus::over_memory;
      outcome.reason = "needs " + format_bytes(screened.peak_memory_bytes) + " per GPU, " +
                       format_bytes(screened.capacity_bytes) + " available";
    } else {
      outcome.bound_score = objective_bound(screened, options);
      order.push_back(i);
      continue;
    }
    outcome.result = candidate_row(outcome, options);
  }
  // Good candidates first: the sooner the best are simulated, the more the bound prunes.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return result.outcomes[a].bound_score < result.outcomes[b].bound_score;
  });

  std::vector<const CandidateOutcome*> done;
  std::map<std::string, std::size_t> played;  // simulation signature -> the candidate playing it
  const auto not_reached = [&](CandidateOutcome& outcome) {
    outcome.status = CandidateStatus::not_reached;
    outcome.reason = "the search's time budget of " + format_seconds(options.budget_seconds) +
                     " ran out before it";
    outcome.result = candidate_row(outcome, options);
  };
  std::size_t next = 0;
  while (next < order.size()) {
    double elapsed = 0;
    SearchDeadline deadline;
    if (options.budget_seconds > 0) {
      const auto now = std::chrono::steady_clock::now();
      elapsed = std::chrono::duration<double>(now - options.budget_start.value_or(start)).count();
      if (options.agreed_seconds) elapsed = options.agreed_seconds(elapsed);
      // The first wave always runs whole, so that a budget too small still gives an answer.
      if (!done.empty()) {
        deadline = now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                             std::chrono::duration<double>(options.budget_seconds - elapsed));
      }
    }
    if (options.budget_seconds > 0 && elapsed > options.budget_seconds && !done.empty()) {
      result.budget_ran_out = true;
      for (; next < order.size(); ++next) not_reached(result.outcomes[order[next]]);
      break;
    }
    // The next wave: pruning is decided here, from the waves before only.
    std::vector<std::size_t> wave;
    while (next < order.size() && wave.size() < std::max<std::size_t>(options.wave, 1)) {
      auto& outcome = result.outcomes[order[next++]];
      std::string reason;
      if (!options.exhaustive && !may_matter(outcome, done, options.top, options.pareto, reason)) {
        outcome.status = CandidateStatus::bounded;
        outcome.reason = reason;
        outcome.result = candidate_row(outcome, options);
        continue;
      }
      wave.push_back(outcome.screened.candidate.index);
    }
    // Candidates whose simulation another one (evaluated, or earlier in this wave) plays too
    // take its result instead of a simulation of their own.
    std::vector<const ScreenedCandidate*> to_simulate;
    for (auto index : wave) {
      auto& outcome = result.outcomes[index];
      const auto twin = played.find(outcome.screened.simulation_signature);
      if (twin != played.end()) {
        outcome.same_simulation_as = twin->second;
        continue;
      }
      played.emplace(outcome.screened.simulation_signature, index);
      const PointResult* kept = stored ? stored(outcome.screened.candidate) : nullptr;
      if (kept) {
        outcome.result = *kept;
        outcome.resumed = true;
        ++result.resumed;
      } else {
        to_simulate.push_back(&outcome.screened);
      }
    }
    std::set<std::size_t> cut;  // candidates the deadline stopped, and those sharing them
    if (!to_simulate.empty()) {
      auto simulated = evaluate(to_simulate, deadline);
      if (simulated.size() != to_simulate.size()) {
        throw std::logic_error(
            "plan: the evaluator returned a result per candidate it was not given");
      }
      for (std::size_t k = 0; k < to_simulate.size(); ++k) {
        const auto index = to_simulate[k]->candidate.index;
        if (!simulated[k]) {
          cut.insert(index);
          continue;
        }
        result.outcomes[index].result = std::move(*simulated[k]);
        ++result.simulated;
      }
    }
    for (auto index : wave) {
      auto& outcome = result.outcomes[index];
      if (cut.count(index) ||
          (outcome.same_simulation_as && cut.count(*outcome.same_simulation_as))) {
        not_reached(outcome);
        continue;
      }
      if (outcome.same_simulation_as) {
        outcome.result = shared_result(result.outcomes[*outcome.same_simulation_as], outcome);
        ++result.shared;
      }
      const bool ok = outcome.result.status == PointStatus::ok;
      outcome.status = ok ? CandidateStatus::evaluated : CandidateStatus::failed;
      if (!ok) outcome.reason = "the simulation did not give a step: " + outcome.result.note;
      outcome.result = candidate_row(outcome, options);
      outcome.score = objective_of(outcome.result, options);
      if (ok) done.push_back(&outcome);
    }
    if (!cut.empty()) {
      result.budget_ran_out = true;
      for (; next < order.size(); ++next) not_reached(result.outcomes[order[next]]);
    }
    if (finished) {
      finish(result);
      result.wall_seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      finished(result, false);
    }
  }
  finish(result);
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (finished) finished(result, true);
  return result;
}

}  // namespace tessera
