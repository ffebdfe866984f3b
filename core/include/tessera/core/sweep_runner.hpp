#pragma once
// Runs every point of a scenario's sweep through a backend, writing the results after each point
// (atomically) and resuming an interrupted sweep without redoing finished points.
#include <functional>
#include <string>
#include <vector>

#include "tessera/core/profile_database.hpp"
#include "tessera/core/result_schema.hpp"
#include "tessera/core/scenario_loader.hpp"

namespace tessera {

struct SweepRunOptions {
  std::string backend;           // "sim" or "real": names the files <dir>/<backend>.csv|json
  std::string output_directory;  // default: the scenario's outputs.directory
  bool resume = true;            // keep finished points found in an earlier results file
  nlohmann::json settings;       // backend settings recorded in the run JSON
  std::string tessera_version;
  // The measured kernels the backend used (may be null): every point's micro-batching plan is
  // made from them and recorded with its result.
  const ProfileDatabase* profiles = nullptr;
};

using PointRunner = std::function<PointResult(const SweepPoint& point)>;
// Called before each point (result null) and after it; `resumed` marks points kept from disk.
using SweepProgress =
    std::function<void(std::size_t done, std::size_t total, const SweepPoint& point,
                       const PointResult* result, bool resumed)>;

struct SweepRunResult {
  std::vector<PointResult> points;
  std::size_t resumed = 0;
  std::string csv_path;
  std::string json_path;
};

SweepRunResult run_sweep(const LoadedScenario& scenario, const SweepRunOptions& options,
                         const PointRunner& run_point, const SweepProgress& progress = {});

// Whether a stored row is the result of this point (same scenario, backend and configuration).
bool result_matches_point(const PointResult& row, const std::string& scenario,
                          const std::string& backend, const SweepPoint& point);

// Parallel efficiency of each point against the first: weak scaling t0/t, strong t0*g0/(t*g).
std::vector<double> parallel_efficiency(const std::vector<PointResult>& points, Scaling scaling);

}  // namespace tessera
