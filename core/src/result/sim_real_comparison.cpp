#include "tessera/core/result/sim_real_comparison.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "tessera/core/common/quantity.hpp"
#include "tessera/core/common/text_table.hpp"
#include "tessera/core/result/csv_field.hpp"

namespace tessera {
namespace {

struct Category {
  const char* name;
  double StepBreakdown::*seconds;
};

constexpr Category kCategories[] = {
    {"compute", &StepBreakdown::compute_seconds},
    {"halo", &StepBreakdown::halo_seconds},
    {"allreduce", &StepBreakdown::allreduce_seconds},
    {"other_comm", &StepBreakdown::other_communication_seconds},
    {"io", &StepBreakdown::io_seconds},
    {"offload", &StepBreakdown::offload_seconds},
    {"idle", &StepBreakdown::idle_seconds},
};

std::string why_not_ok(const char* side, const PointResult& result) {
  return std::string(side) + " " + to_string(result.status) +
         (result.note.empty() ? "" : ": " + result.note);
}

std::string percent(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.1f%%", value);
  return text;
}

}  // namespace

SimRealComparison compare_sim_real(const std::vector<PointResult>& measured,
                                   const std::vector<PointResult>& simulated) {
  std::map<std::int64_t, const PointResult*> simulated_by_point;
  for (const auto& result : simulated) simulated_by_point[result.point] = &result;
  SimRealComparison comparison;
  double absolute_error_sum = 0;
  std::size_t compared = 0;
  for (const auto& real : measured) {
    PointComparison row;
    row.point = real.point;
    row.ranks = real.gpus;
    row.spatial_grid = real.spatial_grid;
    row.measured = real.breakdown;
    row.measured_step_seconds = real.step_seconds;
    const auto found = simulated_by_point.find(real.point);
    if (real.status != PointStatus::ok) {
      row.reason = why_not_ok("measured", real);
    } else if (found == simulated_by_point.end()) {
      row.reason = "not simulated";
    } else if (found->second->status != PointStatus::ok) {
      row.reason = why_not_ok("simulated", *found->second);
    } else if (!(real.step_seconds > 0)) {
      row.reason = "measured step is not positive";
    } else {
      row.compared = true;
      row.simulated = found->second->breakdown;
      row.simulated_step_seconds = found->second->step_seconds;
      row.error_percent = 100 * (row.simulated_step_seconds - row.measured_step_seconds) /
                          row.measured_step_seconds;
      absolute_error_sum += std::fabs(row.error_percent);
      ++compared;
    }
    comparison.points.push_back(row);
  }
  if (compared > 0) comparison.mape_percent = absolute_error_sum / static_cast<double>(compared);
  return comparison;
}

std::string comparison_to_csv(const SimRealComparison& comparison) {
  std::ostringstream csv;
  csv << "point,ranks,spatial_grid,compared,measured_step_s,simulated_step_s,error_percent";
  for (const auto& category : kCategories) {
    csv << ",measured_" << category.name << "_s,simulated_" << category.name << "_s";
  }
  csv << ",note\n";
  for (const auto& row : comparison.points) {
    csv << row.point << "," << row.ranks << "," << csv_field(row.spatial_grid) << ","
        << (row.compared ? "yes" : "no") << ","
        << (row.compared ? csv_number(row.measured_step_seconds) : "") << ","
        << (row.compared ? csv_number(row.simulated_step_seconds) : "") << ","
        << (row.compared ? csv_number(row.error_percent) : "");
    for (const auto& category : kCategories) {
      csv << "," << (row.compared ? csv_number(row.measured.*category.seconds) : "") << ","
          << (row.compared ? csv_number(row.simulated.*category.seconds) : "");
    }
    csv << "," << csv_field(row.reason) << "\n";
  }
  // The summary row: the MAPE in the error column (absolute errors averaged).
  csv << "MAPE,,,,,," << (comparison.mape_percent ? csv_number(*comparison.mape_percent) : "");
  for (std::size_t i = 0; i < std::size(kCategories); ++i) csv << ",,";
  csv << ",mean of |error_percent| over the compared points\n";
  return csv.str();
}

std::string comparison_report(const SimRealComparison& comparison) {
  TextTable steps({"point", "ranks", "grid", "measured", "simulated", "error", "note"});
  std::vector<std::string> headers{"point"};
  for (const auto& category : kCategories) {
    headers.push_back(std::string(category.name) + " real");
    headers.push_back(std::string(category.name) + " sim");
  }
  TextTable parts(headers);
  bool any_compared = false;
  for (const auto& row : comparison.points) {
    if (!row.compared) {
      steps.add_row({std::to_string(row.point), std::to_string(row.ranks), row.spatial_grid, "-",
                     "-", "-", "skipped: " + row.reason});
      continue;
    }
    any_compared = true;
    steps.add_row({std::to_string(row.point), std::to_string(row.ranks), row.spatial_grid,
                   format_seconds(row.measured_step_seconds),
                   format_seconds(row.simulated_step_seconds), percent(row.error_percent), ""});
    std::vector<std::string> cells{std::to_string(row.point)};
    for (const auto& category : kCategories) {
      cells.push_back(format_seconds(row.measured.*category.seconds));
      cells.push_back(format_seconds(row.simulated.*category.seconds));
    }
    parts.add_row(cells);
  }
  std::string report = steps.render();
  if (any_compared)
    report +=
        "\nexposed time per category, measured (real) and simulated (sim):\n" + parts.render();
  char mape[96];
  if (comparison.mape_percent) {
    std::snprintf(mape, sizeof mape, "\nMAPE %.1f%% over %zu point(s)\n", *comparison.mape_percent,
                  static_cast<std::size_t>(
                      std::count_if(comparison.points.begin(), comparison.points.end(),
                                    [](const PointComparison& row) { return row.compared; })));
  } else {
    std::snprintf(mape, sizeof mape, "\nMAPE: no point could be compared\n");
  }
  return report + mape;
}

}  // namespace tessera
