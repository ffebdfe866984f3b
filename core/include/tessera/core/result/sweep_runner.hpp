#pragma once
// Runs every point of a scenario's sweep through a backend, writing the results after each point
// and resuming an interrupted sweep without redoing finished points. The run JSON is the record
// (written first, atomically); the CSV is derived from it. A stored point is kept only when its
// configuration and every input that determined it (run_inputs.hpp) are unchanged.
#include <functional>
#include <string>
#include <vector>

#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/result/result_schema.hpp"

namespace tessera {

struct SweepRunOptions {
  std::string backend;           // "sim" or "real": names the files <dir>/<backend>.csv|json
  std::string output_directory;  // default: the scenario's outputs.directory
  bool resume = true;            // keep finished points found in an earlier results file
  nlohmann::json settings;       // backend settings recorded in the run JSON
  // What a measurement was taken on (devices, compute threads); null for the simulator, whose
  // numbers do not depend on the machine it runs on.
  nlohmann::json machine;
  std::string tessera_version;
  std::vector<std::string> profile_files;  // the files behind `profiles`, digested for resume
  // The measured kernels the backend used (may be null): every point's micro-batching plan is
  // made from them and recorded with its result.
  const ProfileDatabase* profiles = nullptr;
  // Indices of the points to run (`--points`); empty: every point. A point left out keeps its row
  // from the previous results file when that row still matches (whatever `resume` says: choosing
  // points must not discard others' results), and has no row otherwise.
  std::vector<std::size_t> only_points;
};

using PointRunner = std::function<PointResult(const SweepPoint& point)>;
// Called before each point (result null) and after it; `resumed` marks points kept from disk.
using SweepProgress =
    std::function<void(std::size_t done, std::size_t total, const SweepPoint& point,
                       const PointResult* result, bool resumed)>;

struct SweepRunResult {
  std::vector<PointResult> points;
  std::size_t resumed = 0;     // kept from the previous run
  std::size_t recomputed = 0;  // stored, but run again because an input changed or it failed
  std::vector<std::string> recompute_reasons;  // why, each once ("cluster file changed", ...)
  std::size_t not_selected = 0;  // left out by only_points, with no stored row to keep
  std::string csv_path;
  std::string json_path;
};

SweepRunResult run_sweep(const LoadedScenario& scenario, const SweepRunOptions& options,
                         const PointRunner& run_point, const SweepProgress& progress = {});

// The points (indices into scenario.points) run_sweep would run with these options: those
// selected and not kept from the previous results. Lets MPI ranks share them out before run_sweep
// records them.
std::vector<std::size_t> points_to_run(const LoadedScenario& scenario,
                                       const SweepRunOptions& options);

// Whether point `index` is among those to run (`only_points`, or every point when it is empty).
bool point_selected(const SweepRunOptions& options, std::size_t index);

// "kept 3 points; recomputed 7: cluster file changed" (empty when nothing was stored).
std::string resume_summary(const SweepRunResult& run);

// "2 of 5 point(s) failed ...: point 3: <note>..." for the points whose status is failed
// (training diverged, a simulation child died, a rank could not start); empty when none did.
// Skipped points and those that do not fit are answers, not failures.
std::string failed_points_summary(const std::vector<PointResult>& points);

// Whether a stored row is the result of this point (same scenario, backend and configuration).
bool result_matches_point(const PointResult& row, const std::string& scenario,
                          const std::string& backend, const SweepPoint& point);

// Parallel efficiency of each point against the baseline (the fewest GPUs among the points with a
// step time, an ok one first): weak scaling t0/t, strong t0*g0/(t*g); 0 without a step time.
std::vector<double> parallel_efficiency(const std::vector<PointResult>& points, Scaling scaling);

}  // namespace tessera
