#include "profile_coverage_report.hpp"

#include <algorithm>
#include <iostream>
#include <ostream>

#include "tessera/core/common/quantity.hpp"

namespace tessera::app {
namespace {

std::string location(const ProfileEntry& row) {
  return row.where.file + ":" + std::to_string(row.where.line);
}

// The row's key as the file writes it: what a user searches the file for.
std::string key_text(const ProfileEntry& row) {
  return row.device + "," + row.op + "," + to_string(row.direction) + "," + row.shape + "," +
         to_string(row.dtype) + "," + std::to_string(row.micro_batch) + "," + row.algorithm;
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string text;
  for (const auto& name : names) text += (text.empty() ? "'" : ", '") + name + "'";
  return text;
}

bool names_the_device(const ProfileCoverage& c) {
  return std::find(c.devices.begin(), c.devices.end(), c.device) != c.devices.end();
}

std::string device_mismatch(const ProfileCoverage& c) {
  return "the rows name device " + quoted_list(c.devices) + ", the cluster's gpu.model is '" +
         c.device + "': simulate with the cluster file `tessera profile` wrote beside the " +
         "profile (--cluster)";
}

void warn_if_no_profile_row_matches(const ProfileDatabase& profiles, const LoadedScenario& scenario,
                                    const std::string& scenario_file, std::ostream& warnings) {
  if (profiles.size() == 0) return;
  const auto c = profile_coverage(profiles, scenario);
  if (c.measured_kernels > 0) return;
  warnings << "warning: " << scenario_file << ": no row of the --profiles times a kernel of "
           << "this scenario, so every kernel is timed at the roofline: ";
  if (!names_the_device(c)) {
    warnings << device_mismatch(c) << "\n";
  } else if (c.matching_rows > 0) {
    warnings << "its " << counted(static_cast<std::int64_t>(c.matching_rows), "matching row")
             << " say ok=false (the algorithm did not run)\n";
  } else {
    warnings << "the rows of '" << c.device << "' hold other kernels, dtypes or micro-batches "
             << "(tessera validate " << scenario_file << " --profiles ... lists them)\n";
  }
}

}  // namespace

void report_profile_coverage(const ProfileCoverage& c, const std::string& scenario_file,
                             std::ostream& out, std::ostream& warnings) {
  const auto kernel_rows = static_cast<std::int64_t>(c.rows - c.machine_rows);
  out << scenario_file << ": profiles: " << format_count(static_cast<std::int64_t>(c.matching_rows))
      << " of " << counted(kernel_rows, "kernel row") << " match its kernels on '" << c.device
      << "' (" << c.measured_kernels << " of "
      << counted(static_cast<std::int64_t>(c.kernels), "kernel")
      << " measured, the rest at the roofline)";
  if (c.machine_rows > 0) {
    out << "; " << counted(static_cast<std::int64_t>(c.machine_rows), "machine row")
        << " not read (copies, collectives and rank passes describe the machine)";
  }
  out << "\n";
  if (c.unmatched.empty()) return;
  warnings << "warning: " << scenario_file << ": no kernel of this scenario on '" << c.device
           << "' matches " << counted(static_cast<std::int64_t>(c.unmatched.size()), "profile row")
           << " (device, op, direction, shape, dtype and micro_batch):\n";
  const auto listed = std::min(c.unmatched.size(), kUnmatchedRowsListed);
  for (std::size_t i = 0; i < listed; ++i) {
    warnings << "  " << location(c.unmatched[i]) << ": " << key_text(c.unmatched[i]) << "\n";
  }
  if (c.unmatched.size() > listed) {
    warnings << "  ... and " << c.unmatched.size() - listed << " more\n";
  }
  if (c.matching_rows == 0 && !names_the_device(c)) {
    warnings << "  " << device_mismatch(c) << "\n";
  }
}

ProfileDatabase load_scenario_profiles(const std::vector<std::string>& files,
                                       const LoadedScenario& scenario,
                                       const std::string& scenario_file, bool warn) {
  ProfileDatabase profiles;
  for (const auto& path : files) profiles.load_csv(path);
  if (warn) warn_if_no_profile_row_matches(profiles, scenario, scenario_file, std::cerr);
  return profiles;
}

}  // namespace tessera::app
