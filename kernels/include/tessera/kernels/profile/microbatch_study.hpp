#pragma once
// The mu-cuDNN micro-batching study on one device (Oyama et al. 2018): per convolution kernel,
// workspace limit and micro-batching policy, the planner's plan (from measured profiles) is run
// for real and set against the best undivided algorithm under the same limit, so the predicted and
// the measured speed-ups can be compared.
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/micro_batching/micro_batch_plan.hpp"
#include "tessera/core/point/profile_plan.hpp"
#include "tessera/core/scenario/scenario.hpp"
#include "tessera/kernels/profile/kernel_profiler.hpp"

namespace tessera::kernels {

class Device;

struct StudyOptions {
  std::vector<double> workspace_limits_bytes{8.0 * 1024 * 1024, 64.0 * 1024 * 1024,
                                             512.0 * 1024 * 1024};
  std::vector<MicroBatchPolicy> policies{MicroBatchPolicy::undivided,
                                         MicroBatchPolicy::power_of_two, MicroBatchPolicy::all};
  // Policy `all` profiles every size 1..B; above this batch it is not run and its rows say so.
  std::int64_t all_policy_max_batch = 64;
  ProfilerOptions measurement;
};

struct StudyRow {
  std::string kernel;  // a DeepBench problem number or a layer name
  Direction direction = Direction::forward;
  std::int64_t batch = 0;
  double workspace_limit_bytes = 0;
  MicroBatchPolicy policy = MicroBatchPolicy::undivided;
  std::string plan;  // describe(plan)
  double plan_workspace_bytes = 0;
  bool limit_met = true;           // the plan's workspace is within the limit
  bool baseline_limit_met = true;  // some undivided algorithm is within the limit
  double predicted_seconds = 0;
  double measured_seconds = 0;
  // The best undivided algorithm under the same limit, predicted and run.
  double baseline_predicted_seconds = 0;
  double baseline_measured_seconds = 0;
  std::string note;  // why a row has no figures, or a caveat; empty when all is well

  bool measured() const { return measured_seconds > 0 && baseline_measured_seconds > 0; }
  // Plan and baseline both run and both within the limit: a speed-up the summaries count.
  bool compared() const { return measured() && limit_met && baseline_limit_met; }
  double predicted_speedup() const { return baseline_predicted_seconds / predicted_seconds; }
  double measured_speedup() const { return baseline_measured_seconds / measured_seconds; }
  // How far the run's time is from the plan's prediction, in percent of the prediction.
  double prediction_error_percent() const {
    return 100.0 * (measured_seconds - predicted_seconds) / predicted_seconds;
  }
};

// The micro-batch sizes the options' policies need for a batch (policy `all` only up to the cap).
std::vector<std::int64_t> study_micro_batch_sizes(const StudyOptions& options, std::int64_t batch);

// Profiles, on the device, what `database` lacks of the sizes of `sizes` (sizes_to_measure: a size
// without rows, or an algorithm without its row), so an interrupted or extended study measures
// only what is new. Returns how many sizes were measured.
std::size_t profile_missing_sizes(Device& device, KernelToProfile kernel,
                                  const std::vector<std::int64_t>& sizes,
                                  const ProfilerOptions& options, ProfileDatabase& database);

// As profile_missing_sizes, but each size b is timed in context: B / b micro-batches of b run one
// after another over the whole batch's operands, as a plan runs them, and the time divided by
// B / b. Isolated profiling repeats one micro-batch on the same small operands, which stay in the
// CPU's caches; a plan streams through the batch, so on a CPU the isolated figure flatters small
// micro-batches. `measured`: the rows an earlier run took, where they are not `database`
// (tessera profile gathers the new rows apart); none: `database`.
std::size_t profile_missing_sizes_in_context(Device& device, const KernelToProfile& kernel,
                                             const std::vector<std::int64_t>& sizes,
                                             const ProfilerOptions& options,
                                             ProfileDatabase& database,
                                             const ProfileDatabase* measured = nullptr);

// One row per (limit, policy) for one convolution kernel: plan_kernel on the database's rows
// (less the algorithms options.measurement skips), then the plan and the undivided baseline run
// through the device's kernels (median of repeated runs; equal plans are run once).
std::vector<StudyRow> study_kernel(Device& device, const std::string& kernel_name,
                                   const KernelToProfile& kernel, const ProfileDatabase& database,
                                   const StudyOptions& options);

}  // namespace tessera::kernels
