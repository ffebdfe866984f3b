#pragma once
// What `tessera validate SCENARIO --profiles FILE` says about a profile database against a
// scenario: how many rows the simulation can use (stdout) and, as a warning on stderr, the rows
// that match none of its kernels, so a profile of another device or shard shape is noticed before
// a run falls back to the roofline without a word.
#include <iosfwd>
#include <string>
#include <vector>

#include "tessera/core/point/profile_coverage.hpp"

namespace tessera::app {

// The unmatched rows listed at most; a count stands for the rest.
constexpr std::size_t kUnmatchedRowsListed = 10;

void report_profile_coverage(const ProfileCoverage& coverage, const std::string& scenario_file,
                             std::ostream& out, std::ostream& warnings);

// The --profiles of the commands that simulate with them (run, plan, describe, export), loaded
// in order; with `warn` (the rank that reports, under mpirun), one warning on stderr when no row
// times a kernel of the scenario, so that a profile of another device is noticed there too.
ProfileDatabase load_scenario_profiles(const std::vector<std::string>& files,
                                       const LoadedScenario& scenario,
                                       const std::string& scenario_file, bool warn);

}  // namespace tessera::app
