#include "tessera/kernels/profile/microbatch_study_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "tessera/core/common/quantity.hpp"
#include "tessera/core/common/text_table.hpp"
#include "tessera/core/result/csv_field.hpp"

namespace tessera::kernels {
namespace {

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.6g", value);
  return text;
}

std::string fixed(double value, int digits) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

StudySummary summarise_group(const std::vector<const StudyRow*>& group) {
  StudySummary summary{.workspace_limit_bytes = group.front()->workspace_limit_bytes,
                       .policy = group.front()->policy};
  double log_predicted = 0, log_measured = 0, abs_error = 0;
  double predicted = 0, measured = 0, baseline_predicted = 0, baseline_measured = 0;
  for (const StudyRow* row : group) {
    if (!row->compared()) {
      ++summary.excluded;
      continue;
    }
    ++summary.kernels;
    predicted += row->predicted_seconds;
    measured += row->measured_seconds;
    baseline_predicted += row->baseline_predicted_seconds;
    baseline_measured += row->baseline_measured_seconds;
    log_predicted += std::log(row->predicted_speedup());
    log_measured += std::log(row->measured_speedup());
    summary.max_predicted_speedup =
        std::max(summary.max_predicted_speedup, row->predicted_speedup());
    summary.max_measured_speedup = std::max(summary.max_measured_speedup, row->measured_speedup());
    const double error = std::abs(row->prediction_error_percent());
    abs_error += error;
    summary.max_abs_error_percent = std::max(summary.max_abs_error_percent, error);
  }
  if (summary.kernels > 0) {
    const auto count = static_cast<double>(summary.kernels);
    summary.geomean_predicted_speedup = std::exp(log_predicted / count);
    summary.geomean_measured_speedup = std::exp(log_measured / count);
    summary.mean_abs_error_percent = abs_error / count;
    summary.total_predicted_speedup = baseline_predicted / predicted;
    summary.total_measured_speedup = baseline_measured / measured;
  }
  return summary;
}

}  // namespace

std::vector<StudySummary> summarise(const std::vector<StudyRow>& rows) {
  std::vector<std::pair<double, MicroBatchPolicy>> keys;
  for (const StudyRow& row : rows) {
    const std::pair key{row.workspace_limit_bytes, row.policy};
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  }
  std::vector<StudySummary> summaries;
  for (const auto& [limit, policy] : keys) {
    std::vector<const StudyRow*> group;
    for (const StudyRow& row : rows) {
      if (row.workspace_limit_bytes == limit && row.policy == policy) group.push_back(&row);
    }
    summaries.push_back(summarise_group(group));
  }
  return summaries;
}

std::string study_rows_csv(const std::vector<StudyRow>& rows) {
  std::ostringstream out;
  out << "kernel,direction,batch,workspace_limit_bytes,policy,plan,plan_workspace_bytes,limit_met,"
         "baseline_limit_met,predicted_s,measured_s,baseline_predicted_s,baseline_measured_s,"
         "predicted_speedup,"
         "measured_speedup,prediction_error_percent,note\n";
  for (const StudyRow& row : rows) {
    out << csv_field(row.kernel) << ',' << to_string(row.direction) << ',' << row.batch << ','
        << number(row.workspace_limit_bytes) << ',' << to_string(row.policy) << ','
        << csv_field(row.plan) << ',' << number(row.plan_workspace_bytes) << ','
        << (row.limit_met ? "true" : "false") << ',' << (row.baseline_limit_met ? "true" : "false")
        << ',';
    if (row.measured()) {
      out << number(row.predicted_seconds) << ',' << number(row.measured_seconds) << ','
          << number(row.baseline_predicted_seconds) << ',' << number(row.baseline_measured_seconds)
          << ',' << number(row.predicted_speedup()) << ',' << number(row.measured_speedup()) << ','
          << number(row.prediction_error_percent());
    } else {
      out << ",,,,,,";
    }
    out << ',' << csv_field(row.note) << '\n';
  }
  return out.str();
}

std::string study_summary_csv(const std::vector<StudySummary>& summaries) {
  std::ostringstream out;
  out << "workspace_limit_bytes,policy,kernels,excluded,geomean_predicted_speedup,"
         "geomean_measured_speedup,max_predicted_speedup,max_measured_speedup,"
         "total_predicted_speedup,total_measured_speedup,mean_abs_error_percent,max_abs_error_"
         "percent\n";
  for (const StudySummary& s : summaries) {
    out << number(s.workspace_limit_bytes) << ',' << to_string(s.policy) << ',' << s.kernels << ','
        << s.excluded << ',' << number(s.geomean_predicted_speedup) << ','
        << number(s.geomean_measured_speedup) << ',' << number(s.max_predicted_speedup) << ','
        << number(s.max_measured_speedup) << ',' << number(s.total_predicted_speedup) << ','
        << number(s.total_measured_speedup) << ',' << number(s.mean_abs_error_percent) << ','
        << number(s.max_abs_error_percent) << '\n';
  }
  return out.str();
}

std::string study_summary_text(const std::vector<StudySummary>& summaries) {
  std::vector<double> limits;
  for (const StudySummary& s : summaries) {
    if (std::find(limits.begin(), limits.end(), s.workspace_limit_bytes) == limits.end()) {
      limits.push_back(s.workspace_limit_bytes);
    }
  }
  using Align = TextTable::Align;
  std::ostringstream out;
  for (double limit : limits) {
    TextTable table(
        {"policy", "kernels", "excluded", "geomean pred", "geomean meas", "max pred", "max meas",
         "total pred", "total meas", "mean |err|", "max |err|"},
        {Align::left, Align::right, Align::right, Align::right, Align::right, Align::right,
         Align::right, Align::right, Align::right, Align::right, Align::right});
    for (const StudySummary& s : summaries) {
      if (s.workspace_limit_bytes != limit) continue;
      table.add_row(
          {to_string(s.policy), std::to_string(s.kernels), std::to_string(s.excluded),
           fixed(s.geomean_predicted_speedup, 2) + "x", fixed(s.geomean_measured_speedup, 2) + "x",
           fixed(s.max_predicted_speedup, 2) + "x", fixed(s.max_measured_speedup, 2) + "x",
           fixed(s.total_predicted_speedup, 2) + "x", fixed(s.total_measured_speedup, 2) + "x",
           fixed(s.mean_abs_error_percent, 1) + "%", fixed(s.max_abs_error_percent, 1) + "%"});
    }
    out << "workspace limit " << format_bytes(limit) << ":\n" << table.render() << "\n";
  }
  return out.str();
}

}  // namespace tessera::kernels
