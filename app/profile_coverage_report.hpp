#pragma once
// What `tessera validate SCENARIO --profiles FILE` says about a profile database against a
// scenario: how many rows the simulation can use (stdout) and, as a warning on stderr, the rows
// that match none of its kernels, so a profile of another device or shard shape is noticed before
// a run falls back to the roofline without a word.
#include <iosfwd>
#include <string>

#include "tessera/core/point/profile_coverage.hpp"

namespace tessera::app {

// The unmatched rows listed at most; a count stands for the rest.
constexpr std::size_t kUnmatchedRowsListed = 10;

void report_profile_coverage(const ProfileCoverage& coverage, const std::string& scenario_file,
                             std::ostream& out, std::ostream& warnings);

// For the commands that simulate with --profiles (run, plan, describe, export): one warning when
// no row matches a kernel of the scenario, so that a profile of another device is noticed
// there too; nothing when some row matches or there are no profiles.
void warn_if_no_profile_row_matches(const ProfileDatabase& profiles, const LoadedScenario& scenario,
                                    const std::string& scenario_file, std::ostream& warnings);

}  // namespace tessera::app
