#pragma once
// validate-sim's work for one rank count R, in OUTPUT/ranks-R/ (steps 1 to 5 of
// validate_sim_command.cpp): the points of R ranks profiled, simulated on the machine the profile
// describes, trained for real, and simulated again with the rows timed between the real steps.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "machine_drift.hpp"
#include "rank_cluster.hpp"
#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/result/result_schema.hpp"
#include "validate_sim_settings.hpp"

namespace tessera::app {

// What every rank count's work shares.
struct Validation {
  const ValidateSimSettings& settings;
  std::vector<std::string> launcher;  // --mpirun's words
  const LoadedScenario& loaded;
  Machine machine;
  std::int64_t largest_point = 1;  // the sweep's most ranks
  // Between the real run's steps its kernels are timed again (InterleavedProfiler), so that both
  // sides see the same moments of the machine; not where the steps read files, whose reads a
  // pause between steps would hide, and on CPU ranks only: no GPU has run it yet.
  bool interleave = false;
  MachineDrift drift;
  // Rank jitter only where asked for (--jitter-seconds): on this project's development VM it did
  // not predict the 2-rank steps better, measured either way (docs/measurements/
  // 2026-12-04-cpu-rank-jitter.md, 2026-12-05-cpu-rank-passes.md).
  // `rows` where asked for, else none.
  const ProfileDatabase& jitter_passes(const ProfileDatabase& rows) const;
};

// One rank count's points and where their files go.
struct RankCount {
  std::int64_t ranks = 1;
  std::vector<const SweepPoint*> points;
  std::filesystem::path directory;  // OUTPUT/ranks-R
  int threads = 1;                  // per rank
  // The points' indices, e.g. "0,1" with separator ",".
  std::string indices(const std::string& separator = ",") const;
};

// What one rank count gave.
struct RankCountOutcome {
  std::vector<PointResult> simulated;         // the compared simulation
  std::vector<PointResult> simulated_before;  // from the profile measured before training alone
  std::vector<PointResult> measured;          // real runs, or why a point has none
};

// A point's result where nothing was measured (skipped or failed), saying why in its note.
PointResult unmeasured(const LoadedScenario& loaded, const SweepPoint& point, PointStatus status,
                       const std::string& note);

// Steps 1 to 5 for one rank count; the points that could not be measured say why.
RankCountOutcome validate_rank_count(Validation& validation, const RankCount& count);

}  // namespace tessera::app
