#pragma once
// How much of a profile database a scenario's simulation can use: a row counts when the cost model
// would look it up for one of the scenario's kernels (the cluster's gpu.model as device, the
// kernel's op, direction, shape and dtype, a micro-batch its policy may use) or for its optimizer
// update. What `tessera validate --profiles` reports, so that a profile of another device, dtype
// or shard shape is noticed before a run quietly falls back to the roofline.
#include <cstddef>
#include <string>
#include <vector>

#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/loading/scenario_loader.hpp"

namespace tessera {

struct ProfileCoverage {
  std::string device;                   // the cluster's gpu.model, which a usable row must name
  std::size_t rows = 0;                 // every row of the database
  std::size_t matching_rows = 0;        // rows the simulation may read
  std::size_t machine_rows = 0;         // copies, collectives, rank passes: the machine, no kernel
  std::vector<ProfileEntry> unmatched;  // every other row, by file and line
  std::size_t kernels = 0;              // distinct kernels and updates the scenario runs
  std::size_t measured_kernels = 0;     // of those, the ones with a matching row that ran (ok)
  std::vector<std::string> devices;     // the device names the rows give, sorted
};

ProfileCoverage profile_coverage(const ProfileDatabase& profiles, const LoadedScenario& scenario);

}  // namespace tessera
