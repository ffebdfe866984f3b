#include "tessera/core/plan_search/plan_explain.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>

#include "tessera/core/common/quantity.hpp"

namespace tessera {
namespace {

std::string signed_seconds(double seconds) {
  return (seconds >= 0 ? "+" : "-") + format_seconds(std::abs(seconds));
}

std::string percent(double part, double whole) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f%%", whole != 0 ? 100 * part / whole : 0.0);
  return text;
}

// The strategy keys in which two candidates differ: "data 64 against 32; grid 1x2x16 against ..."
std::string strategy_differences(const PlanStrategy& a, const PlanStrategy& b) {
  std::vector<std::string> parts;
  auto add = [&](const std::string& key, const std::string& x, const std::string& y) {
    if (x != y) parts.push_back(key + " " + x + " against " + y);
  };
  add("data", std::to_string(a.data), std::to_string(b.data));
  add("samples per replica", std::to_string(a.mini_batch), std::to_string(b.mini_batch));
  add("grid", grid_to_string(a.spatial_grid), grid_to_string(b.spatial_grid));
  auto until = [](const PlanStrategy& s) {
    return s.spatial_until.empty() ? std::string("(first dense layer)") : s.spatial_until;
  };
  add("split until", until(a), until(b));
  add("model degree", std::to_string(a.model_degree), std::to_string(b.model_degree));
  add("micro-batches", std::to_string(a.micro_batches), std::to_string(b.micro_batches));
  add("schedule", to_string(a.schedule), to_string(b.schedule));
  add("offload", to_string(a.offload), to_string(b.offload));
  add("workspace", format_bytes(a.workspace_limit_bytes), format_bytes(b.workspace_limit_bytes));
  std::string text;
  for (const auto& part : parts) text += (text.empty() ? "" : "; ") + part;
  return text.empty() ? "nothing" : text;
}

}  // namespace

std::string long_search_warning(std::size_t undecided, std::size_t simulated,
                                double simulating_seconds, double quiet_seconds) {
  if (simulated < kSimulationsToEstimate || undecided == 0) return "";
  const double each_seconds = simulating_seconds / static_cast<double>(simulated);
  const double all_seconds = each_seconds * static_cast<double>(undecided);
  if (all_seconds < quiet_seconds) return "";
  std::ostringstream text;
  text << std::fixed << std::setprecision(1) << "plan: " << undecided
       << " candidates undecided; simulating them all at " << each_seconds
       << " s each (so far) would take up to ";
  if (all_seconds >= 3600) {
    text << all_seconds / 3600 << " h";
  } else {
    text << all_seconds / 60 << " min";
  }
  text << ". --budget-s SECONDS ends the search sooner with the best found, and says so";
  return text.str();
}

std::string format_objective(double score, PlanObjective objective) {
  char text[64];
  switch (objective) {
    case PlanObjective::step:
      return format_seconds(score) + "/sample";
    case PlanObjective::time_to_train:
      return format_time_to_train(score);
    case PlanObjective::samples_per_joule:
      std::snprintf(text, sizeof text, "%.4g samples/J", score > 0 ? 1 / score : 0.0);
      return text;
  }
  return "?";
}

std::string objective_label(PlanObjective objective) {
  return objective == PlanObjective::step ? "step per sample" : to_string(objective);
}

std::string explain_winner(const PlanSearchResult& search, const PlanSearchOptions& options) {
  if (search.ranking.size() < 2) return "";
  const auto& first = search.outcomes[search.ranking[0]];
  // Candidates that tie with the winner (often the same simulation: a grid with its axes
  // permuted) explain nothing; the runner-up is the best that differs.
  std::vector<std::size_t> ties;
  const CandidateOutcome* runner_up = nullptr;
  for (std::size_t r = 1; r < search.ranking.size(); ++r) {
    const auto& outcome = search.outcomes[search.ranking[r]];
    if (outcome.score == first.score && outcome.result.breakdown == first.result.breakdown) {
      ties.push_back(outcome.screened.candidate.index);
      continue;
    }
    runner_up = &outcome;
    break;
  }
  std::string text;
  if (!ties.empty()) {
    text += "Candidate " + std::to_string(first.screened.candidate.index) + " ties with";
    for (std::size_t i = 0; i < std::min<std::size_t>(ties.size(), 8); ++i) {
      text += (i == 0 ? " " : ", ") + std::to_string(ties[i]);
    }
    text += ties.size() > 8 ? " and " + std::to_string(ties.size() - 8) + " more" : "";
    text += " (the same step and breakdown; the lower index wins)\n";
  }
  if (!runner_up) return text + "Every simulated candidate ties with it.\n";
  const auto& second = *runner_up;
  const auto& a = first.result;
  const auto& b = second.result;
  text += "Why candidate " + std::to_string(first.screened.candidate.index) + " beats candidate " +
          std::to_string(second.screened.candidate.index) + " (the runner-up):\n";
  text +=
      "  strategy: " +
      strategy_differences(first.screened.candidate.strategy, second.screened.candidate.strategy) +
      "\n";
  text += "  " + objective_label(options.objective) + ": " +
          format_objective(first.score, options.objective) + " against " +
          format_objective(second.score, options.objective) + "\n";
  text += "  step: " + format_seconds(a.step_seconds) + " against " +
          format_seconds(b.step_seconds) + " (" + signed_seconds(a.step_seconds - b.step_seconds) +
          ", " + percent(a.step_seconds - b.step_seconds, b.step_seconds) + ")\n";
  const std::array<std::pair<const char*, double>, 7> parts{{
      {"compute", a.breakdown.compute_seconds - b.breakdown.compute_seconds},
      {"halo", a.breakdown.halo_seconds - b.breakdown.halo_seconds},
      {"all-reduce", a.breakdown.allreduce_seconds - b.breakdown.allreduce_seconds},
      {"other communication",
       a.breakdown.other_communication_seconds - b.breakdown.other_communication_seconds},
      {"I/O", a.breakdown.io_seconds - b.breakdown.io_seconds},
      {"offload", a.breakdown.offload_seconds - b.breakdown.offload_seconds},
      {"idle", a.breakdown.idle_seconds - b.breakdown.idle_seconds},
  }};
  std::vector<std::pair<const char*, double>> sorted(parts.begin(), parts.end());
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) {
    return std::abs(x.second) > std::abs(y.second);
  });
  text += "  breakdown, winner minus runner-up (exposed time, largest difference first):";
  bool any = false;
  for (const auto& [name, difference] : sorted) {
    if (difference == 0) continue;
    text += std::string(any ? "," : "") + " " + name + " " + signed_seconds(difference);
    any = true;
  }
  text += any ? "\n" : " none\n";
  if (any && sorted.front().second < 0) {
    text += "  the winner gains most in " + std::string(sorted.front().first) + "\n";
  } else if (any) {
    text += "  the winner loses most in " + std::string(sorted.front().first) +
            ", and gains more elsewhere\n";
  }
  if (a.global_batch != b.global_batch || options.objective != PlanObjective::step) {
    text += "  global batch " + std::to_string(a.global_batch) + " against " +
            std::to_string(b.global_batch) + "\n";
  }
  text += "  memory per GPU: " + format_bytes(a.peak_memory_bytes) + " against " +
          format_bytes(b.peak_memory_bytes) + "\n";
  return text;
}

std::string explain_pruned(const PlanSearchResult& search, std::size_t examples) {
  const std::array<CandidateStatus, 5> reasons{
      CandidateStatus::invalid, CandidateStatus::over_memory, CandidateStatus::bounded,
      CandidateStatus::not_reached, CandidateStatus::failed};
  const std::array<const char*, 5> meaning{
      "the split does not fit the model", "the memory plan exceeds the GPU (or --memory-limit)",
      "the step's lower bound (compute along its critical path, the transfers a GPU waits for at "
      "its links' bandwidth) cannot reach the best or the Pareto front",
      "the time budget ran out", "the simulation failed"};
  std::string text;
  for (std::size_t r = 0; r < reasons.size(); ++r) {
    std::vector<const CandidateOutcome*> of_reason;
    for (const auto& outcome : search.outcomes) {
      if (outcome.status == reasons[r]) of_reason.push_back(&outcome);
    }
    if (of_reason.empty()) continue;
    text += "Not simulated, " + to_string(reasons[r]) + " (" + std::to_string(of_reason.size()) +
            "): " + meaning[r] + "\n";
    for (std::size_t i = 0; i < std::min(examples, of_reason.size()); ++i) {
      const auto& o = *of_reason[i];
      text += "  candidate " + std::to_string(o.screened.candidate.index) + " (" +
              describe(o.screened.candidate.strategy) + "): " + o.reason + "\n";
    }
    if (of_reason.size() > examples) {
      text += "  ... and " + std::to_string(of_reason.size() - examples) +
              " more (every one with its reason: plan.csv, status skipped)\n";
    }
  }
  return text;
}

std::string explain_own_strategy(const PlanSearchResult& search, const PlanStrategy& own,
                                 const PlanSearchOptions& options) {
  for (const auto& outcome : search.outcomes) {
    if (!(outcome.screened.candidate.strategy == own)) continue;
    const std::string who = "The scenario's own strategy (candidate " +
                            std::to_string(outcome.screened.candidate.index) + ", " +
                            describe(own) + ")";
    if (outcome.status != CandidateStatus::evaluated) {
      return who + " was not simulated: " + to_string(outcome.status) + ", " + outcome.reason +
             "\n";
    }
    const auto at = std::find(search.ranking.begin(), search.ranking.end(),
                              static_cast<std::size_t>(&outcome - search.outcomes.data()));
    const auto rank = static_cast<std::size_t>(at - search.ranking.begin()) + 1;
    const auto& best = search.outcomes[search.ranking.front()];
    char ratio[32];
    std::snprintf(ratio, sizeof ratio, "%.2fx", best.score > 0 ? outcome.score / best.score : 0.0);
    return who + " ranks " + std::to_string(rank) + " of " + std::to_string(search.ranking.size()) +
           ": " + format_objective(outcome.score, options.objective) + ", " + ratio +
           " the best's\n";
  }
  return "";
}

}  // namespace tessera
