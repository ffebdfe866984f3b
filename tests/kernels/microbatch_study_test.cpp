// The micro-batching study on the CPU: a small convolution profiled, planned per limit and policy
// and run for real; the summaries' geometric means and maxima; policy `all` above its cap.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/point/profile_plan.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/profile/microbatch_study.hpp"
#include "tessera/kernels/profile/microbatch_study_report.hpp"

namespace tessera::kernels {
namespace {

constexpr double mib = 1024.0 * 1024.0;

// custom_model's 1x1 branch (32 -> 16 channels on 32 x 32) at a batch of 4, in one direction.
KernelToProfile small_convolution(Direction direction) {
  const auto loaded =
      load_scenario(std::string(TESSERA_SOURCE_DIR) + "/scenarios/custom_model.yaml");
  for (KernelToProfile kernel : kernels_to_profile(loaded)) {
    if (kernel.layer.name == "branch_a" && kernel.direction == direction) {
      kernel.batch = 4;
      return kernel;
    }
  }
  throw std::logic_error("custom_model has no branch_a");
}

StudyOptions quick_options() {
  StudyOptions options;
  options.workspace_limits_bytes = {64 * mib};
  options.measurement.seconds_per_measurement = 0.001;
  options.measurement.skipped_algorithm_prefixes = {"ref:"};
  return options;
}

TEST(MicrobatchStudy, PlansAndRunsEveryPolicyOfEveryDirection) {
  auto device = open_device("cpu");
  const StudyOptions options = quick_options();
  ProfileDatabase database;
  for (Direction direction :
       {Direction::forward, Direction::backward_data, Direction::backward_filter}) {
    const KernelToProfile kernel = small_convolution(direction);
    const auto sizes = study_micro_batch_sizes(options, kernel.batch);
    EXPECT_EQ(sizes, (std::vector<std::int64_t>{1, 2, 3, 4}));
    EXPECT_EQ(profile_missing_sizes(*device, kernel, sizes, options.measurement, database), 4u);
    EXPECT_EQ(profile_missing_sizes(*device, kernel, sizes, options.measurement, database), 0u)
        << "sizes already in the database are not measured again";
    for (const ProfileEntry& row : database.entries_for(device->info().name, kernel.op, direction,
                                                        kernel.shape, kernel.dtype)) {
      EXPECT_FALSE(row.algorithm.starts_with("ref:")) << "skipped algorithms get no row";
    }

    const auto rows = study_kernel(*device, "branch_a", kernel, database, options);
    ASSERT_EQ(rows.size(), 3u);  // one limit, three policies
    for (const StudyRow& row : rows) {
      SCOPED_TRACE(to_string(direction) + " " + to_string(row.policy) + " " + row.plan);
      EXPECT_TRUE(row.measured()) << row.note;
      EXPECT_GT(row.predicted_seconds, 0);
      EXPECT_LE(row.plan_workspace_bytes, 64 * mib);
      // The planner's plan is never slower than the undivided one it may also choose.
      EXPECT_LE(row.predicted_seconds, row.baseline_predicted_seconds);
    }
    // Undivided is the baseline itself, run once: both speed-ups are exactly 1.
    EXPECT_EQ(rows[0].policy, MicroBatchPolicy::undivided);
    EXPECT_EQ(rows[0].predicted_speedup(), 1.0);
    EXPECT_EQ(rows[0].measured_speedup(), 1.0);
  }
}

TEST(MicrobatchStudy, InContextProfileTimesEverySizeOverTheWholeBatch) {
  auto device = open_device("cpu");
  const StudyOptions options = quick_options();
  const KernelToProfile kernel = small_convolution(Direction::backward_filter);
  ProfileDatabase database;
  const std::vector<std::int64_t> sizes{1, 3, 4};
  EXPECT_EQ(profile_missing_sizes_in_context(*device, kernel, sizes, options.measurement, database),
            3u);
  EXPECT_EQ(profile_missing_sizes_in_context(*device, kernel, sizes, options.measurement, database),
            0u);
  std::set<std::int64_t> seen;
  for (const ProfileEntry& row : database.entries_for(
           device->info().name, kernel.op, kernel.direction, kernel.shape, kernel.dtype)) {
    seen.insert(row.micro_batch);
    EXPECT_FALSE(row.algorithm.starts_with("ref:"));
    if (row.ok) {
      EXPECT_GT(row.time_seconds, 0) << row.algorithm << " at " << row.micro_batch;
    }
  }
  EXPECT_EQ(seen, (std::set<std::int64_t>{1, 3, 4}));
  const auto rows = study_kernel(*device, "branch_a", kernel, database, options);
  EXPECT_TRUE(rows.back().measured()) << rows.back().note;
}

TEST(MicrobatchStudy, PolicyAllAboveItsCapIsReportedNotRun) {
  auto device = open_device("cpu");
  StudyOptions options = quick_options();
  options.all_policy_max_batch = 2;
  const KernelToProfile kernel = small_convolution(Direction::forward);
  EXPECT_EQ(study_micro_batch_sizes(options, kernel.batch), (std::vector<std::int64_t>{1, 2, 4}));
  ProfileDatabase database;
  profile_missing_sizes(*device, kernel, study_micro_batch_sizes(options, kernel.batch),
                        options.measurement, database);
  const auto rows = study_kernel(*device, "branch_a", kernel, database, options);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_FALSE(rows[2].measured());
  EXPECT_EQ(rows[2].note, "not run: batch 4 > --all-max-batch 2");
  const auto summaries = summarise(rows);
  ASSERT_EQ(summaries.size(), 3u);
  EXPECT_EQ(summaries[2].kernels, 0u);
  EXPECT_EQ(summaries[2].excluded, 1u);
}

StudyRow row(double limit, MicroBatchPolicy policy, double predicted, double measured,
             double baseline_predicted, double baseline_measured) {
  return {.kernel = "k",
          .workspace_limit_bytes = limit,
          .policy = policy,
          .predicted_seconds = predicted,
          .measured_seconds = measured,
          .baseline_predicted_seconds = baseline_predicted,
          .baseline_measured_seconds = baseline_measured};
}

TEST(MicrobatchStudySummary, GeometricMeanMaximumAndErrorPerLimitAndPolicy) {
  const auto two = MicroBatchPolicy::power_of_two;
  std::vector<StudyRow> rows{row(8, two, 1, 2, 4, 4),    // 4x predicted, 2x measured, +100%
                             row(8, two, 1, 1, 1, 1),    // 1x, 1x, 0%
                             row(64, two, 2, 2, 3, 3)};  // 1.5x, 1.5x
  StudyRow over = row(8, two, 1, 1, 9, 9);
  over.baseline_limit_met = false;  // no undivided algorithm fits: not a speed-up to count
  rows.push_back(over);
  const auto summaries = summarise(rows);
  ASSERT_EQ(summaries.size(), 2u);
  const StudySummary& eight = summaries[0];
  EXPECT_EQ(eight.workspace_limit_bytes, 8);
  EXPECT_EQ(eight.kernels, 2u);
  EXPECT_EQ(eight.excluded, 1u);
  EXPECT_DOUBLE_EQ(eight.geomean_predicted_speedup, 2.0);
  EXPECT_DOUBLE_EQ(eight.geomean_measured_speedup, std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(eight.max_predicted_speedup, 4.0);
  EXPECT_DOUBLE_EQ(eight.max_measured_speedup, 2.0);
  EXPECT_DOUBLE_EQ(eight.mean_abs_error_percent, 50.0);
  EXPECT_DOUBLE_EQ(eight.max_abs_error_percent, 100.0);
  EXPECT_DOUBLE_EQ(eight.total_predicted_speedup, 5.0 / 2.0);
  EXPECT_DOUBLE_EQ(eight.total_measured_speedup, 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(summaries[1].geomean_measured_speedup, 1.5);

  const std::string csv = study_rows_csv(rows);
  EXPECT_NE(csv.find("\nk,forward,0,8,power_of_two,,0,true,true,1,2,4,4,4,2,100,\n"),
            std::string::npos)
      << csv;
  EXPECT_NE(study_summary_text(summaries).find("2.00x"), std::string::npos);
}

}  // namespace
}  // namespace tessera::kernels
