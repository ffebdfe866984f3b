#include "tessera/core/micro_batching/micro_batch_planner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>

namespace tessera {
namespace {

constexpr double kPlannerMiB = 1024.0 * 1024.0;
constexpr double kPlannerMs = 1e-3;
constexpr double kUnlimited = std::numeric_limits<double>::infinity();

ProfileEntry row(std::int64_t micro_batch, const std::string& algorithm, double seconds,
                 double workspace_bytes, bool ok = true) {
  ProfileEntry e;
  e.op = "conv";
  e.micro_batch = micro_batch;
  e.algorithm = algorithm;
  e.time_seconds = seconds;
  e.workspace_bytes = workspace_bytes;
  e.ok = ok;
  return e;
}

// The worked case: a fast algorithm taking 0.1*b + 0.01 ms with b MiB of workspace and a
// slow one taking 10*b + 0.1 ms with b bytes, profiled at every size 1..256.
std::vector<ProfileEntry> worked_case_rows() {
  std::vector<ProfileEntry> rows;
  for (std::int64_t b = 1; b <= 256; ++b) {
    const auto size = static_cast<double>(b);
    rows.push_back(row(b, "fast", (0.1 * size + 0.01) * kPlannerMs, size * kPlannerMiB));
    rows.push_back(row(b, "slow", (10 * size + 0.1) * kPlannerMs, size));
  }
  return rows;
}

TEST(CandidateMicroBatchSizes, FollowThePolicy) {
  using V = std::vector<std::int64_t>;
  EXPECT_EQ(candidate_micro_batch_sizes(MicroBatchPolicy::undivided, 12), V{12});
  EXPECT_EQ(candidate_micro_batch_sizes(MicroBatchPolicy::power_of_two, 12), (V{1, 2, 4, 8, 12}));
  EXPECT_EQ(candidate_micro_batch_sizes(MicroBatchPolicy::power_of_two, 16), (V{1, 2, 4, 8, 16}));
  EXPECT_EQ(candidate_micro_batch_sizes(MicroBatchPolicy::all, 4), (V{1, 2, 3, 4}));
  EXPECT_TRUE(candidate_micro_batch_sizes(MicroBatchPolicy::all, 0).empty());
}

TEST(KernelOptions, KeepRowsThatRanFitAndAreOnTheParetoFrontOfTheirSize) {
  const std::vector<ProfileEntry> rows{
      row(4, "gemm", 4.0, 0),          row(4, "fft", 1.0, 100),
      row(4, "winograd", 2.0, 50),     row(4, "dominated", 3.0, 60),  // beaten by winograd
      row(4, "failed", 0.1, 0, false), row(4, "too_big", 0.5, 1000),
      row(3, "not_a_power", 1.0, 0),   row(2, "gemm", 2.0, 0)};
  const auto options = kernel_options(rows, MicroBatchPolicy::power_of_two, 4, 500);
  std::vector<std::string> kept;
  for (const auto& o : options) kept.push_back(std::to_string(o.micro_batch) + " " + o.algorithm);
  EXPECT_EQ(kept, (std::vector<std::string>{"2 gemm", "4 gemm", "4 winograd", "4 fft"}));
}

// The issue says the best plan under 64 MiB is 8 x 32 with the fast algorithm (25.68 ms). Under
// its own rule, workspace <= limit, a 64-sample micro-batch's 64 MiB fits, and 4 x 64 with the
// fast algorithm takes 4 x 6.41 = 25.64 ms, which is faster. The figure is the answer for
// a limit just below 64 MiB (or a strict "<"), which this test pins as well.
TEST(MicroBatchPlanner, WorkedCaseAtExactly64MiBIsFourTimes64) {
  const auto planned =
      plan_kernel(worked_case_rows(), MicroBatchPolicy::power_of_two, 256, 64 * kPlannerMiB);
  ASSERT_TRUE(planned);
  EXPECT_TRUE(planned->limit_met);
  EXPECT_EQ(describe(planned->plan), "4 x 64 fast");
  EXPECT_NEAR(planned->plan.seconds(), 25.64 * kPlannerMs, 1e-12);
  EXPECT_DOUBLE_EQ(planned->plan.workspace_bytes(), 64 * kPlannerMiB);
}

TEST(MicroBatchPlanner, WorkedCaseJustBelow64MiBIsEightTimes32) {
  const auto planned =
      plan_kernel(worked_case_rows(), MicroBatchPolicy::power_of_two, 256, 64 * kPlannerMiB - 1);
  ASSERT_TRUE(planned);
  EXPECT_EQ(describe(planned->plan), "8 x 32 fast");
  EXPECT_NEAR(planned->plan.seconds(), 25.68 * kPlannerMs, 1e-12);
  // Every size allowed: four micro-batches of 63 and one of 4, 25.6 + 5 x 0.01 ms.
  const auto any_size =
      plan_kernel(worked_case_rows(), MicroBatchPolicy::all, 256, 64 * kPlannerMiB - 1);
  ASSERT_TRUE(any_size);
  EXPECT_EQ(any_size->plan.micro_batches.size(), 5u);
  EXPECT_NEAR(any_size->plan.seconds(), 25.65 * kPlannerMs, 1e-12);
  EXPECT_LE(any_size->plan.workspace_bytes(), 64 * kPlannerMiB - 1);
}

TEST(MicroBatchPlanner, WorkedCaseUndividedFallsBackToTheSlowAlgorithm) {
  const auto planned =
      plan_kernel(worked_case_rows(), MicroBatchPolicy::undivided, 256, 64 * kPlannerMiB);
  ASSERT_TRUE(planned);
  EXPECT_EQ(describe(planned->plan), "1 x 256 slow");
  EXPECT_NEAR(planned->plan.seconds(), 2560.1 * kPlannerMs, 1e-9);
}

TEST(MicroBatchPlanner, NothingFitsGivesTheLeastWorkspacePlanFlagged) {
  // Every algorithm needs workspace, so a zero limit cannot be met: the planner returns the plan
  // needing the least (256 x 1 slow, 1 byte) and says the limit was not met.
  const auto planned = plan_kernel(worked_case_rows(), MicroBatchPolicy::power_of_two, 256, 0);
  ASSERT_TRUE(planned);
  EXPECT_FALSE(planned->limit_met);
  EXPECT_EQ(describe(planned->plan), "256 x 1 slow");
  EXPECT_DOUBLE_EQ(planned->plan.workspace_bytes(), 1);
}

TEST(MicroBatchPlanner, ZeroLimitUsesTheZeroWorkspaceAlgorithm) {
  auto rows = worked_case_rows();
  for (std::int64_t b : {64, 128, 256}) {
    rows.push_back(row(b, "implicit_gemm", 0.5 * static_cast<double>(b) * kPlannerMs, 0));
  }
  const auto planned = plan_kernel(rows, MicroBatchPolicy::power_of_two, 256, 0);
  ASSERT_TRUE(planned);
  EXPECT_TRUE(planned->limit_met);
  EXPECT_EQ(describe(planned->plan), "1 x 256 implicit_gemm");
}

TEST(MicroBatchPlanner, NoUsableRowGivesNoPlan) {
  EXPECT_FALSE(plan_kernel({}, MicroBatchPolicy::all, 8, kUnlimited));
  // Rows only at a size the policy does not allow, or that failed.
  EXPECT_FALSE(plan_kernel({row(3, "gemm", 1, 0), row(8, "fft", 1, 0, false)},
                           MicroBatchPolicy::power_of_two, 8, kUnlimited));
}

TEST(MicroBatchPlanner, ParetoPlansAreOrderedAndUndominated) {
  const auto front =
      pareto_plans(kernel_options(worked_case_rows(), MicroBatchPolicy::power_of_two, 256), 256);
  ASSERT_GE(front.size(), 3u);
  for (std::size_t i = 0; i < front.size(); ++i) {
    EXPECT_EQ(front[i].samples(), 256);
    if (i == 0) continue;
    EXPECT_GT(front[i].workspace_bytes(), front[i - 1].workspace_bytes());
    EXPECT_LT(front[i].seconds(), front[i - 1].seconds());
  }
  EXPECT_EQ(describe(front.back()), "1 x 256 fast");
}

// --- Random tables against brute force -------------------------------------------------------

struct RandomTable {
  std::int64_t batch = 1;
  MicroBatchPolicy policy = MicroBatchPolicy::all;
  std::vector<ProfileEntry> rows;
};

RandomTable random_table(std::mt19937& random) {
  std::uniform_int_distribution<int> batch_of(1, 12), algorithms_of(1, 4), policy_of(0, 2);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  RandomTable table;
  table.batch = batch_of(random);
  table.policy = static_cast<MicroBatchPolicy>(policy_of(random));
  for (std::int64_t size = 1; size <= table.batch; ++size) {
    if (size != table.batch && unit(random) < 0.2) continue;  // a size nobody profiled
    const int algorithms = algorithms_of(random);
    for (int a = 0; a < algorithms; ++a) {
      const double seconds =
          static_cast<double>(size) * (0.2 + 2 * unit(random)) + 0.3 * unit(random);
      const double workspace =
          unit(random) < 0.25 ? 0 : std::floor(100 * unit(random)) * kPlannerMiB;
      table.rows.push_back(
          row(size, "algo" + std::to_string(a), seconds, workspace, unit(random) < 0.9));
    }
  }
  return table;
}

struct BruteForce {
  double best_seconds = kUnlimited;     // fastest composition within the limit
  double least_workspace = kUnlimited;  // least workspace of any composition, limit ignored
};

// Every ordered composition of the batch into allowed sizes; each part takes its fastest
// algorithm within the limit (and, separately, its least-workspace one).
BruteForce brute_force(const RandomTable& table, double limit) {
  const auto sizes = candidate_micro_batch_sizes(table.policy, table.batch);
  auto fastest = [&](std::int64_t size) {
    double best = kUnlimited;
    for (const auto& r : table.rows) {
      if (r.ok && r.micro_batch == size && r.workspace_bytes <= limit)
        best = std::min(best, r.time_seconds);
    }
    return best;
  };
  auto least = [&](std::int64_t size) {
    double best = kUnlimited;
    for (const auto& r : table.rows) {
      if (r.ok && r.micro_batch == size) best = std::min(best, r.workspace_bytes);
    }
    return best;
  };
  BruteForce result;
  std::function<void(std::int64_t, double, double)> compose = [&](std::int64_t left, double seconds,
                                                                  double workspace) {
    if (left == 0) {
      result.best_seconds = std::min(result.best_seconds, seconds);
      result.least_workspace = std::min(result.least_workspace, workspace);
      return;
    }
    for (auto size : sizes) {
      if (size > left) break;
      const double part_least = least(size);
      if (part_least == kUnlimited) continue;
      compose(left - size, seconds + fastest(size), std::max(workspace, part_least));
    }
  };
  compose(table.batch, 0, 0);
  return result;
}

// Each micro-batch must be a row that ran, with its time and workspace.
void expect_plan_made_of_rows(const MicroBatchPlan& plan, const RandomTable& table) {
  EXPECT_EQ(plan.samples(), table.batch);
  const auto sizes = candidate_micro_batch_sizes(table.policy, table.batch);
  for (const auto& mb : plan.micro_batches) {
    EXPECT_TRUE(std::binary_search(sizes.begin(), sizes.end(), mb.samples));
    const bool found = std::any_of(table.rows.begin(), table.rows.end(), [&](const auto& r) {
      return r.ok && r.micro_batch == mb.samples && r.algorithm == mb.algorithm &&
             r.time_seconds == mb.seconds && r.workspace_bytes == mb.workspace_bytes;
    });
    EXPECT_TRUE(found) << mb.samples << " " << mb.algorithm;
  }
}

TEST(MicroBatchPlanner, DynamicProgrammingEqualsBruteForceOnRandomTables) {
  std::mt19937 random(20261121);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int compared = 0, infeasible = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const auto table = random_table(random);
    // Every workspace in the table is a limit where the best plan may change: checking them all
    // checks the whole Pareto front the whole-network mode chooses from.
    std::vector<double> limits{0.0, std::floor(100 * unit(random)) * kPlannerMiB, kUnlimited};
    for (const auto& r : table.rows) limits.push_back(r.workspace_bytes);
    for (double limit : limits) {
      SCOPED_TRACE("trial " + std::to_string(trial) + " limit " + std::to_string(limit));
      const auto expected = brute_force(table, limit);
      const auto planned = plan_kernel(table.rows, table.policy, table.batch, limit);
      if (expected.least_workspace == kUnlimited) {
        EXPECT_FALSE(planned) << "no composition exists, yet a plan was made";
        continue;
      }
      ASSERT_TRUE(planned);
      expect_plan_made_of_rows(planned->plan, table);
      if (expected.best_seconds < kUnlimited) {
        EXPECT_TRUE(planned->limit_met);
        EXPECT_LE(planned->plan.workspace_bytes(), limit);
        EXPECT_NEAR(planned->plan.seconds(), expected.best_seconds, 1e-12 * expected.best_seconds);
        ++compared;
      } else {
        EXPECT_FALSE(planned->limit_met);
        EXPECT_DOUBLE_EQ(planned->plan.workspace_bytes(), expected.least_workspace);
        ++infeasible;
      }
    }
  }
  // The generator must exercise both outcomes, or this test proves little.
  EXPECT_GT(compared, 2000);
  EXPECT_GT(infeasible, 20);
}

}  // namespace
}  // namespace tessera
