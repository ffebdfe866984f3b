#include "plan_report.hpp"

#include <cstdio>
#include <map>

#include "tessera/core/common/quantity.hpp"
#include "tessera/core/common/text_table.hpp"
#include "tessera/core/plan_search/plan_explain.hpp"

namespace tessera::app {
namespace {

std::string fixed(double value, const char* format) {
  char text[48];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::string until_of(const PlanStrategy& s) {
  bool split = false;
  for (auto parts : s.spatial_grid) split |= parts > 1;
  if (!split) return "-";
  return s.spatial_until.empty() ? "(dense)" : s.spatial_until;
}

// "2 1f1b x4": the stages, and their pipeline where the batch flows through them in parts.
std::string model_of(const PlanStrategy& s) {
  if (s.micro_batches == 1) return std::to_string(s.model_degree);
  return std::to_string(s.model_degree) + " " + to_string(s.schedule) + " x" +
         std::to_string(s.micro_batches);
}

// "4, shard optimizer": the tensor degree and what ZeRO shards (the "tensor, ZeRO" column).
std::string tensor_of(const PlanStrategy& s) {
  return std::to_string(s.tensor) +
         (s.shard == ShardLevel::none ? "" : ", shard " + to_string(s.shard));
}

// "dyn: conv" for the dynamic policy, with what it applied.
std::string offload_of(const ScreenedCandidate& screened) {
  const auto& s = screened.candidate.strategy;
  if (s.offload != OffloadPolicy::dyn) return to_string(s.offload);
  return "dyn: " + to_string(screened.applied_offload.policy) +
         (screened.applied_offload.memory_optimal_algorithms ? "+no ws" : "");
}

}  // namespace

std::string ranking_table(const PlanSearchResult& search, const PlanSearchOptions& options,
                          std::size_t top) {
  const bool with_target = options.efficiency.target != TrainingTarget::none;
  const bool with_energy = options.objective == PlanObjective::samples_per_joule;
  std::vector<std::string> columns{
      "rank",        "candidate",   "GPUs",    "data",      "grid", "model",    "tensor, ZeRO",
      "batch/repl.", "split until", "offload", "workspace", "step", "samples/s"};
  if (with_target) columns.push_back("time to train");
  if (with_energy) columns.push_back("samples/J");
  for (const char* column : {"memory/GPU", "compute", "halo", "allreduce", "other comm", "I/O",
                             "offload time", "idle"}) {
    columns.push_back(column);
  }
  TextTable table(columns);
  for (std::size_t r = 0; r < std::min(top, search.ranking.size()); ++r) {
    const auto& outcome = search.outcomes[search.ranking[r]];
    const auto& s = outcome.screened.candidate.strategy;
    const auto& p = outcome.result;
    const auto& b = p.breakdown;
    std::vector<std::string> row{std::to_string(r + 1),
                                 std::to_string(outcome.screened.candidate.index),
                                 std::to_string(p.gpus),
                                 std::to_string(s.data),
                                 grid_to_string(s.spatial_grid),
                                 model_of(s),
                                 tensor_of(s),
                                 std::to_string(s.mini_batch),
                                 until_of(s),
                                 offload_of(outcome.screened),
                                 format_bytes(s.workspace_limit_bytes),
                                 format_seconds(p.step_seconds),
                                 fixed(p.samples_per_second, "%.2f")};
    if (with_target) row.push_back(format_time_to_train(p.time_to_train_seconds));
    if (with_energy) row.push_back(format_objective(outcome.score, options.objective));
    for (auto cell : {format_bytes(p.peak_memory_bytes), format_seconds(b.compute_seconds),
                      format_seconds(b.halo_seconds), format_seconds(b.allreduce_seconds),
                      format_seconds(b.other_communication_seconds), format_seconds(b.io_seconds),
                      format_seconds(b.offload_seconds), format_seconds(b.idle_seconds)}) {
      row.push_back(std::move(cell));
    }
    table.add_row(std::move(row));
  }
  return table.render();
}

std::string pareto_table(const PlanSearchResult& search, const PlanSearchOptions& options) {
  TextTable table(
      {"candidate", objective_label(options.objective), "step", "memory/GPU", "strategy"});
  for (auto i : search.pareto) {
    const auto& outcome = search.outcomes[i];
    table.add_row({std::to_string(outcome.screened.candidate.index),
                   format_objective(outcome.score, options.objective),
                   format_seconds(outcome.result.step_seconds),
                   format_bytes(outcome.result.peak_memory_bytes),
                   describe(outcome.screened.candidate.strategy)});
  }
  return table.render();
}

std::string search_counts(const PlanSearchResult& search) {
  std::map<CandidateStatus, std::size_t> counts;
  for (const auto& outcome : search.outcomes) ++counts[outcome.status];
  std::string text =
      format_count(static_cast<std::int64_t>(search.outcomes.size())) + " candidates: ";
  bool first = true;
  for (const auto status :
       {CandidateStatus::invalid, CandidateStatus::over_memory, CandidateStatus::bounded,
        CandidateStatus::not_reached, CandidateStatus::failed, CandidateStatus::evaluated}) {
    if (counts[status] == 0 && status != CandidateStatus::evaluated) continue;
    text += (first ? "" : ", ") + std::to_string(counts[status]) + " " +
            (status == CandidateStatus::evaluated ? std::string("evaluated") : to_string(status));
    first = false;
  }
  text += " (" + std::to_string(search.simulated) + " simulated";
  if (search.shared > 0) {
    text += ", " + std::to_string(search.shared) + " sharing an identical simulation";
  }
  if (search.resumed > 0)
    text += ", " + std::to_string(search.resumed) + " kept from an earlier run";
  text += ")";
  return text;
}

}  // namespace tessera::app
