#pragma once
// The micro-batching study's tables: every row as CSV, and per workspace limit and policy the
// geometric mean and maximum of the predicted and measured speed-ups with the prediction error.
#include <string>
#include <vector>

#include "tessera/kernels/profile/microbatch_study.hpp"

namespace tessera::kernels {

struct StudySummary {
  double workspace_limit_bytes = 0;
  MicroBatchPolicy policy = MicroBatchPolicy::undivided;
  std::size_t kernels = 0;   // rows compared (StudyRow::compared)
  std::size_t excluded = 0;  // the others: not run, or plan or baseline over the limit (see note)
  double geomean_predicted_speedup = 0;
  double geomean_measured_speedup = 0;
  double max_predicted_speedup = 0;
  double max_measured_speedup = 0;
  // Summed times, baseline over plan: for a network whose kernels are all listed once (AlexNet),
  // the convolutions' share of a training step.
  double total_predicted_speedup = 0;
  double total_measured_speedup = 0;
  double mean_abs_error_percent = 0;  // |measured - predicted| / predicted of the plan's time
  double max_abs_error_percent = 0;
};

// One summary per (limit, policy) present in the rows, in the rows' order.
std::vector<StudySummary> summarise(const std::vector<StudyRow>& rows);

std::string study_rows_csv(const std::vector<StudyRow>& rows);
std::string study_summary_csv(const std::vector<StudySummary>& summaries);
// One aligned table per limit, for the terminal.
std::string study_summary_text(const std::vector<StudySummary>& summaries);

}  // namespace tessera::kernels
