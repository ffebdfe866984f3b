#pragma once
// The micro-batching planner for one convolution kernel (mu-cuDNN, Oyama et al. 2018).
//
// A kernel's mini-batch of B samples may run as micro-batches, each with its own algorithm; times
// add and one workspace buffer is reused, so a plan needs its largest micro-batch's workspace. A
// smaller micro-batch can let a faster but workspace-hungry algorithm fit a limit.
//
// Per size the options (algorithm, time, workspace) come from the profile database. Dynamic
// programming over b = 1..B keeps, for every b, the Pareto front of (workspace, time) over all
// compositions of b:
//   front(b) = pareto( options at b  U  { o (+) p : o an option at b' <= b/2, p in front(b - b') }
//   )
// with (+) adding times and taking the larger workspace. Every composition with two or more parts
// has a smallest part b' <= b/2, so this covers all of them. The scalar recurrence of the paper,
// T(b) = min(best at b, min_{b' <= b/2} best(b') + T(b - b')), is the fastest element of front(b)
// under a limit; the whole front is what the whole-network budget (workspace_budget_ilp.hpp)
// chooses from.
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/micro_batching/micro_batch_plan.hpp"
#include "tessera/core/scenario/scenario.hpp"

namespace tessera {

// One way to run one kernel call: an algorithm on a micro-batch, with its time and workspace.
struct KernelOption {
  std::int64_t micro_batch = 0;
  std::string algorithm;
  double seconds = 0;
  double workspace_bytes = 0;
};

// The micro-batch sizes a policy allows for a batch of `batch` samples, ascending:
// undivided {B}; power_of_two {1, 2, 4, ... <= B} and B; all {1..B}.
std::vector<std::int64_t> candidate_micro_batch_sizes(MicroBatchPolicy policy, std::int64_t batch);

// The options among one kernel's profile rows that the policy allows, that ran (ok) and whose
// workspace is within `workspace_limit_bytes`; per size, only the Pareto front of
// (workspace, time). Ordered by size, then by increasing workspace.
std::vector<KernelOption> kernel_options(
    const std::vector<ProfileEntry>& rows, MicroBatchPolicy policy, std::int64_t batch,
    double workspace_limit_bytes = std::numeric_limits<double>::infinity());

// Every plan of `batch` samples built from `options` that no other plan beats in both workspace
// and time (ties: one is kept), by increasing workspace and so decreasing time. Empty when the
// option sizes cannot add up to `batch`.
std::vector<MicroBatchPlan> pareto_plans(const std::vector<KernelOption>& options,
                                         std::int64_t batch);

// The Pareto plans of one kernel's profile rows that fit `workspace_limit_bytes`; if none does,
// all of them (so that the least-workspace plan is still there to fall back on).
std::vector<MicroBatchPlan> pareto_plans_within(const std::vector<ProfileEntry>& rows,
                                                MicroBatchPolicy policy, std::int64_t batch,
                                                double workspace_limit_bytes);

struct LimitedPlan {
  MicroBatchPlan plan;
  bool limit_met = true;  // false: nothing fits; `plan` is the one needing the least workspace
};

// The fastest plan of a Pareto front within the limit; when none fits, the least-workspace plan,
// flagged. Nullopt only for an empty front.
std::optional<LimitedPlan> choose_within_limit(const std::vector<MicroBatchPlan>& front,
                                               double workspace_limit_bytes);

// Per-layer mode: the fastest plan whose every micro-batch's workspace is within the limit
// (infeasible limits degrade as in choose_within_limit). Nullopt when the profile rows cannot
// make up the batch at all (no usable row at any size that composes it).
std::optional<LimitedPlan> plan_kernel(const std::vector<ProfileEntry>& rows,
                                       MicroBatchPolicy policy, std::int64_t batch,
                                       double workspace_limit_bytes);

}  // namespace tessera
