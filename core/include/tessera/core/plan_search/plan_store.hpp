#pragma once
// Where `tessera plan` writes what it found, in the result schema: <dir>/plan.json (the record,
// written first) and <dir>/plan.csv, one row per candidate (simulated ones with their results,
// pruned ones as skipped rows whose note says why), rewritten atomically as the search goes. A
// later run with the same inputs keeps the simulated rows whose strategy and input digests are
// unchanged (resume, as for sweeps: run_inputs.hpp), so an interrupted search loses at most the
// waves since the last write.
#include <map>
#include <string>

#include "tessera/core/plan_search/plan_search.hpp"
#include "tessera/core/result/result_schema.hpp"

namespace tessera {

struct PlanFiles {
  std::string directory;
  std::string json_path;     // plan.json: every candidate (the run document)
  std::string csv_path;      // plan.csv: the same rows
  std::string best_path;     // best.yaml: the winner as a scenario file
  std::string summary_path;  // summary.json: ranking, Pareto front, pruning counts
};
PlanFiles plan_files(const std::string& directory);

class StoredPlanResults {
 public:
  StoredPlanResults() = default;
  // Reads an earlier plan.json, if any; an unreadable one counts as none (`unreadable()`).
  StoredPlanResults(const std::string& json_path, const nlohmann::json& inputs);
  // The same from the document's text (read by one MPI rank and sent to the others); "" = none.
  static StoredPlanResults from_text(const std::string& text, const std::string& json_path,
                                     const nlohmann::json& inputs);
  // The stored result of this candidate's strategy, if it was simulated with the same inputs.
  const PointResult* find(const PlanCandidate& candidate) const;
  std::size_t size() const { return by_strategy_.size(); }
  bool unreadable() const { return unreadable_; }

 private:
  std::map<std::string, PointResult> by_strategy_;
  bool unreadable_ = false;
};

// Writes plan.json then plan.csv: `header` gives the run metadata (its points are ignored), the
// search one row per decided candidate.
void write_plan_results(const PlanFiles& files, const RunResult& header,
                        const PlanSearchResult& search);

// summary.json: the objective, the ranking (candidate indices, best first), the Pareto front,
// how many candidates each status holds, and whether the budget cut the search short.
nlohmann::json plan_summary_json(const PlanSearchResult& search, const PlanSearchOptions& options);

}  // namespace tessera
