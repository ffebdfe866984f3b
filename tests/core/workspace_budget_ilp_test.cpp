#include "tessera/core/micro_batching/workspace_budget_ilp.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <random>
#include <stdexcept>

#include "tessera/core/micro_batching/micro_batch_planner.hpp"

namespace tessera {
namespace {

using Kernels = std::vector<std::vector<WorkspaceChoice>>;

struct Best {
  double seconds = std::numeric_limits<double>::infinity();
};

// Every assignment of one configuration per kernel.
Best brute_force(const Kernels& kernels, double budget) {
  Best best;
  std::vector<std::size_t> pick(kernels.size(), 0);
  for (;;) {
    double seconds = 0, workspace = 0;
    for (std::size_t k = 0; k < kernels.size(); ++k) {
      seconds += kernels[k][pick[k]].seconds;
      workspace += kernels[k][pick[k]].workspace_bytes;
    }
    if (workspace <= budget) best.seconds = std::min(best.seconds, seconds);
    std::size_t k = 0;
    while (k < kernels.size() && ++pick[k] == kernels[k].size()) pick[k++] = 0;
    if (k == kernels.size()) return best;
  }
}

double least_workspace(const Kernels& kernels) {
  double total = 0;
  for (const auto& choices : kernels) {
    double least = std::numeric_limits<double>::infinity();
    for (const auto& c : choices) least = std::min(least, c.workspace_bytes);
    total += least;
  }
  return total;
}

void expect_consistent(const BudgetAssignment& result, const Kernels& kernels) {
  ASSERT_EQ(result.chosen.size(), kernels.size());
  double seconds = 0, workspace = 0;
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    ASSERT_LT(result.chosen[k], kernels[k].size());
    seconds += kernels[k][result.chosen[k]].seconds;
    workspace += kernels[k][result.chosen[k]].workspace_bytes;
  }
  EXPECT_DOUBLE_EQ(result.seconds, seconds);
  EXPECT_DOUBLE_EQ(result.workspace_bytes, workspace);
}

TEST(WorkspaceBudgetIlp, SmallCaseByHand) {
  // Two kernels; the budget lets only one of them use its fast, hungry configuration, and the
  // second kernel gains more from it.
  const Kernels kernels{{{10, 0}, {6, 100}}, {{20, 0}, {12, 100}}};
  const auto result = solve_workspace_budget(kernels, 150);
  EXPECT_TRUE(result.budget_met);
  EXPECT_EQ(result.chosen, (std::vector<std::size_t>{0, 1}));
  EXPECT_DOUBLE_EQ(result.seconds, 22);
  EXPECT_EQ(solve_workspace_budget(kernels, 200).chosen, (std::vector<std::size_t>{1, 1}));
  EXPECT_EQ(solve_workspace_budget(kernels, 99).chosen, (std::vector<std::size_t>{0, 0}));
}

TEST(WorkspaceBudgetIlp, InfeasibleBudgetGivesTheLeastWorkspaceFlagged) {
  const Kernels kernels{{{10, 5}, {6, 100}}, {{20, 7}, {25, 7}, {12, 100}}};
  const auto result = solve_workspace_budget(kernels, 11);
  EXPECT_FALSE(result.budget_met);
  EXPECT_EQ(result.chosen, (std::vector<std::size_t>{0, 0}));
  EXPECT_DOUBLE_EQ(result.workspace_bytes, 12);
  // Zero budget with zero-workspace configurations is feasible: those are chosen.
  const Kernels with_zero{{{10, 0}, {6, 100}}, {{20, 0}, {12, 100}}};
  const auto zero = solve_workspace_budget(with_zero, 0);
  EXPECT_TRUE(zero.budget_met);
  EXPECT_EQ(zero.chosen, (std::vector<std::size_t>{0, 0}));
}

TEST(WorkspaceBudgetIlp, AKernelWithoutConfigurationsIsAProgrammingError) {
  EXPECT_THROW(solve_workspace_budget({{{1, 0}}, {}}, 10), std::invalid_argument);
}

TEST(WorkspaceBudgetIlp, GlpkPrintsNothing) {
  const Kernels kernels{{{10, 0}, {6, 100}, {7, 60}}, {{20, 0}, {12, 100}, {15, 40}}};
  testing::internal::CaptureStdout();
  const auto result = solve_workspace_budget(kernels, 120);
  EXPECT_EQ(testing::internal::GetCapturedStdout(), "");
  EXPECT_DOUBLE_EQ(result.seconds, 22);  // 7 + 15 (or 10 + 12)
}

TEST(WorkspaceBudgetIlp, EqualsBruteForceOnRandomNetworks) {
  std::mt19937 random(424242);
  std::uniform_int_distribution<int> kernels_of(1, 5), choices_of(1, 5);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int binding = 0, infeasible = 0;
  for (int trial = 0; trial < 300; ++trial) {
    Kernels kernels(static_cast<std::size_t>(kernels_of(random)));
    double fastest_workspace = 0;
    for (auto& choices : kernels) {
      const int count = choices_of(random);
      for (int c = 0; c < count; ++c) {
        // Workspaces in whole MiB-like units, so equal totals occur and ties get exercised.
        choices.push_back({1e-3 * (0.1 + unit(random)), std::floor(64 * unit(random)) * 1048576});
      }
      fastest_workspace += std::max_element(choices.begin(), choices.end(), [](auto& a, auto& b) {
                             return a.seconds > b.seconds;
                           })->workspace_bytes;
    }
    const double least = least_workspace(kernels);
    const double budget = std::floor((least + (fastest_workspace - least) * unit(random)) *
                                     (unit(random) < 0.1 ? 0.5 : 1.0));
    SCOPED_TRACE("trial " + std::to_string(trial) + " budget " + std::to_string(budget));
    const auto result = solve_workspace_budget(kernels, budget);
    expect_consistent(result, kernels);
    const auto expected = brute_force(kernels, budget);
    if (expected.seconds == std::numeric_limits<double>::infinity()) {
      EXPECT_FALSE(result.budget_met);
      EXPECT_DOUBLE_EQ(result.workspace_bytes, least);
      ++infeasible;
      continue;
    }
    EXPECT_TRUE(result.budget_met);
    EXPECT_LE(result.workspace_bytes, budget);
    EXPECT_NEAR(result.seconds, expected.seconds, 1e-9 * expected.seconds);
    if (fastest_workspace > budget) ++binding;
  }
  EXPECT_GT(binding, 150);  // the budget must bind often, or GLPK is rarely asked
  EXPECT_GT(infeasible, 5);
}

// The whole pipeline of the whole-network mode: per-kernel Pareto plans from profile rows, then
// the budget over them, against brute force over every plan of every kernel's front.
TEST(WorkspaceBudgetIlp, OverParetoPlansOfRandomKernels) {
  std::mt19937 random(7);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int trial = 0; trial < 40; ++trial) {
    Kernels kernels;
    for (int k = 0; k < 3; ++k) {
      std::vector<ProfileEntry> rows;
      for (std::int64_t size : {1, 2, 4, 8}) {
        for (int a = 0; a < 3; ++a) {
          ProfileEntry e;
          e.micro_batch = size;
          e.algorithm = "algo" + std::to_string(a);
          e.time_seconds = static_cast<double>(size) * (0.5 + unit(random)) + 0.2 * unit(random);
          e.workspace_bytes = a == 0 ? 0 : std::floor(100 * unit(random)) * 1048576;
          rows.push_back(e);
        }
      }
      std::vector<WorkspaceChoice> choices;
      for (const auto& plan :
           pareto_plans(kernel_options(rows, MicroBatchPolicy::power_of_two, 8), 8)) {
        choices.push_back({plan.seconds(), plan.workspace_bytes()});
      }
      kernels.push_back(choices);
    }
    const double budget = std::floor(150 * unit(random)) * 1048576;
    const auto result = solve_workspace_budget(kernels, budget);
    const auto expected = brute_force(kernels, budget);
    ASSERT_TRUE(result.budget_met);  // algo0 needs no workspace
    EXPECT_NEAR(result.seconds, expected.seconds, 1e-9 * expected.seconds) << "trial " << trial;
  }
}

}  // namespace
}  // namespace tessera
