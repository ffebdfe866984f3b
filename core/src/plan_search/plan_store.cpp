#include "tessera/core/plan_search/plan_store.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tessera/core/common/atomic_file.hpp"
#include "tessera/core/result/result_files.hpp"
#include "tessera/core/result/run_inputs.hpp"

namespace tessera {

PlanFiles plan_files(const std::string& directory) {
  const std::filesystem::path dir(directory);
  return {directory, (dir / "plan.json").string(), (dir / "plan.csv").string(),
          (dir / "best.yaml").string(), (dir / "summary.json").string()};
}

StoredPlanResults::StoredPlanResults(const std::string& json_path, const nlohmann::json& inputs) {
  std::ifstream in(json_path, std::ios::binary);
  if (!in) return;
  std::ostringstream text;
  text << in.rdbuf();
  *this = from_text(text.str(), json_path, inputs);
}

StoredPlanResults StoredPlanResults::from_text(const std::string& text,
                                               const std::string& json_path,
                                               const nlohmann::json& inputs) {
  StoredPlanResults stored;
  if (text.empty()) return stored;
  try {
    // Only the rows a candidate may take are kept: read whole, a plan's document would leave
    // hundreds of megabytes of free heap behind (result_files.hpp).
    for_each_run_point(text, json_path, [&](PointResult&& row) {
      if (row.status != PointStatus::ok || !row.inputs.is_object()) return;
      const auto strategy = row.inputs.find("strategy");
      if (strategy == row.inputs.end() || !strategy->is_string()) return;
      if (!changed_inputs(row.inputs, inputs).empty()) return;
      stored.by_strategy_.emplace(strategy->get<std::string>(), std::move(row));
    });
  } catch (const std::runtime_error&) {
    StoredPlanResults none;  // rows read before the error are not kept either
    none.unreadable_ = true;
    return none;
  }
  return stored;
}

const PointResult* StoredPlanResults::find(const PlanCandidate& candidate) const {
  const auto it = by_strategy_.find(strategy_key(candidate.strategy));
  return it == by_strategy_.end() ? nullptr : &it->second;
}

void write_plan_results(const PlanFiles& files, const RunResult& header,
                        const PlanSearchResult& search) {
  PointResultRefs decided;
  decided.reserve(search.outcomes.size());
  for (const auto& outcome : search.outcomes) {
    // Candidates a running search has not reached yet are left out until it does.
    if (outcome.decided()) decided.emplace_back(outcome.result);
  }
  write_run_json(files.json_path, header, decided);
  write_results_csv(files.csv_path, decided);
}

nlohmann::json plan_summary_json(const PlanSearchResult& search, const PlanSearchOptions& options) {
  nlohmann::json statuses = nlohmann::json::object();
  for (const auto& outcome : search.outcomes) {
    auto& count = statuses[to_string(outcome.status)];
    count = count.is_null() ? 1 : count.get<int>() + 1;
  }
  auto indices = [&](const std::vector<std::size_t>& positions) {
    nlohmann::json list = nlohmann::json::array();
    for (auto i : positions) list.push_back(search.outcomes[i].screened.candidate.index);
    return list;
  };
  return {{"objective", to_string(options.objective)},
          {"top", options.top},
          {"wave", options.wave},
          {"exhaustive", options.exhaustive},
          {"candidates", search.outcomes.size()},
          {"simulated", search.simulated},
          {"resumed", search.resumed},
          {"statuses", statuses},
          {"budget_ran_out", search.budget_ran_out},
          {"ranking", indices(search.ranking)},
          {"pareto_front", indices(search.pareto)}};
}

}  // namespace tessera
