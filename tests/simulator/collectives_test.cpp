// Collectives simulated on small platforms against their alpha-beta formulas: ring, tree,
// hierarchical, all-to-all, all-gather and reduce-scatter (collectives_test_support.hpp).
#include <gtest/gtest.h>

#include "collectives_test_support.hpp"

namespace tessera::sim {
namespace {

using namespace collectives_test;

// ---------------------------------------------------------------------------------------------
// Simulated time against the formulas, p in {2, 3, 4, 8, 16}, S in {1 MB, 100 MB}

struct FormulaCase {
  Collective collective;
  int gpus;
  double bytes;
  Granularity granularity;
};

std::string case_name(const ::testing::TestParamInfo<FormulaCase>& info) {
  const FormulaCase& c = info.param;
  return name_of(c.collective) + "_p" + std::to_string(c.gpus) + "_" +
         std::to_string(static_cast<int>(c.bytes / kMB)) + "MB_" +
         (c.granularity == Granularity::message ? "message" : "aggregated");
}

std::vector<FormulaCase> formula_cases(Collective collective) {
  std::vector<FormulaCase> cases;
  for (Granularity granularity : {Granularity::aggregated, Granularity::message}) {
    for (int gpus : {2, 3, 4, 8, 16}) {
      for (double bytes : {1 * kMB, 100 * kMB}) {
        cases.push_back({collective, gpus, bytes, granularity});
      }
    }
  }
  return cases;
}

class RingFormula : public ::testing::TestWithParam<FormulaCase> {};

// 2(p-1)/p * S/B + 2(p-1) * a, literally, on a flat contention-free star.
TEST_P(RingFormula, MatchesAlphaBeta) {
  const FormulaCase c = GetParam();
  const auto checks = [c] {
    Scenario run;
    run.platform.gpus = c.gpus;
    run.collective = Collective::ring;
    run.bytes = c.bytes;
    run.granularity = c.granularity;
    const double p = c.gpus;
    const double formula = 2 * (p - 1) / p * c.bytes / run.platform.inter.bandwidth +
                           2 * (p - 1) * run.platform.inter.latency;
    std::ostringstream failures;
    const Outcome outcome = simulate(run);
    check_close(failures, describe(run) + " vs formula", outcome.last_finish, formula, kTolerance);
    check_close(failures, describe(run) + " predicted vs formula", outcome.predicted, formula,
                1e-9);
    return failures.str();
  };
  EXPECT_IN_CHILD(checks);
}
INSTANTIATE_TEST_SUITE_P(Collectives, RingFormula,
                         ::testing::ValuesIn(formula_cases(Collective::ring)), case_name);

struct TreeCase {
  int gpus;
  int gpus_per_node;  // 1: a flat star; more: the two-level platform, the last node maybe smaller
  double bytes;
  Granularity granularity;
};

std::string tree_case_name(const ::testing::TestParamInfo<TreeCase>& info) {
  const TreeCase& c = info.param;
  return "tree_p" + std::to_string(c.gpus) + "_g" + std::to_string(c.gpus_per_node) + "_" +
         std::to_string(static_cast<int>(c.bytes / kMB)) + "MB_" +
         (c.granularity == Granularity::message ? "message" : "aggregated");
}

// 2, 4 and 8 nodes of 1, 2 and 4 GPUs; one node (the chain alone); flat groups of odd size and of
// 16; uneven nodes (10 GPUs on nodes of 4: 4, 4, 2; 5 on nodes of 2: 2, 2, 1). Aggregated: 1 MB
// and 100 MB; message: kTreeMessageBytes.
#ifdef TESSERA_TEST_MESSAGE_LEVEL_MOST_GPUS
constexpr int kMessageLevelMostGpus = TESSERA_TEST_MESSAGE_LEVEL_MOST_GPUS;
#else
constexpr int kMessageLevelMostGpus = 1 << 20;
#endif

std::vector<TreeCase> tree_cases() {
  std::vector<std::pair<int, int>> shapes;  // gpus, gpus per node
  for (int nodes : {2, 4, 8}) {
    for (int per_node : {1, 2, 4}) shapes.emplace_back(nodes * per_node, per_node);
  }
  for (auto shape : {std::pair{2, 2}, std::pair{4, 4}, std::pair{3, 1}, std::pair{16, 1},
                     std::pair{10, 4}, std::pair{5, 2}}) {
    shapes.push_back(shape);
  }
  std::vector<TreeCase> cases;
  for (auto [gpus, per_node] : shapes) {
    for (double bytes : {1 * kMB, 100 * kMB})
      cases.push_back({gpus, per_node, bytes, Granularity::aggregated});
  }
  for (auto [gpus, per_node] : shapes) {
    if (gpus > kMessageLevelMostGpus) continue;
    cases.push_back({gpus, per_node, kTreeMessageBytes, Granularity::message});
  }
  return cases;
}

class TreePrediction : public ::testing::TestWithParam<TreeCase> {};

TEST_P(TreePrediction, MatchesAlphaBeta) {
  const TreeCase c = GetParam();
  const auto checks = [c] {
    Scenario run;
    run.platform.gpus = c.gpus;
    run.platform.gpus_per_node = c.gpus_per_node;
    run.collective = Collective::tree;
    run.bytes = c.bytes;
    run.granularity = c.granularity;
    return check_against_prediction(run, kTolerance);
  };
  EXPECT_IN_CHILD(checks);
}
INSTANTIATE_TEST_SUITE_P(Collectives, TreePrediction, ::testing::ValuesIn(tree_cases()),
                         tree_case_name);

// The formula, literally, on 4 nodes of 4 GPUs (two-level platform). The node trees (n = 4, d = 2)
// are 0 -> 2 -> {1, 3} and its mirror 3 -> 1 -> {2, 0}: leaders 1 and 2 have four inter-node
// edges of S/2 each way, 2S through their NIC; the chains (h = 3) carry S each way per edge, 2S
// through a middle member's NVLink port, far faster. So 2h * a_intra + 2d * a_inter + 2S/B_inter.
std::string check_tree_formula(Granularity granularity) {
  Scenario run;
  run.platform.gpus = 16;
  run.platform.gpus_per_node = 4;
  run.collective = Collective::tree;
  run.bytes = 100 * kMB;
  run.granularity = granularity;
  const double formula = 2 * 3 * run.platform.intra.latency + 2 * 2 * run.platform.inter.latency +
                         2 * run.bytes / run.platform.inter.bandwidth;
  std::ostringstream failures;
  const Outcome outcome = simulate(run);
  check_close(failures, describe(run) + " vs formula", outcome.last_finish, formula, kTolerance);
  check_close(failures, describe(run) + " predicted vs formula", outcome.predicted, formula, 1e-9);
  return failures.str();
}

TEST(TreeFormula, FourNodesOfFourAggregated) {
  EXPECT_IN_CHILD([] { return check_tree_formula(Granularity::aggregated); });
}
TEST(TreeFormula, FourNodesOfFourMessage) {
  EXPECT_IN_CHILD([] { return check_tree_formula(Granularity::message); });
}

class HierarchicalPrediction : public ::testing::TestWithParam<FormulaCase> {};

// Nodes of 4 GPUs (p < 8: one node, so the ring; p = 3 on nodes of 2: uneven, so the ring too).
TEST_P(HierarchicalPrediction, MatchesAlphaBeta) {
  const FormulaCase c = GetParam();
  const auto checks = [c] {
    Scenario run;
    run.platform.gpus = c.gpus;
    run.platform.gpus_per_node = c.gpus == 3 ? 2 : std::min(c.gpus, 4);
    run.collective = Collective::hierarchical;
    run.bytes = c.bytes;
    run.granularity = c.granularity;
    return check_against_prediction(run, kTolerance);
  };
  EXPECT_IN_CHILD(checks);
}
INSTANTIATE_TEST_SUITE_P(Collectives, HierarchicalPrediction,
                         ::testing::ValuesIn(formula_cases(Collective::hierarchical)), case_name);

class HierarchicalSharedNic : public ::testing::TestWithParam<FormulaCase> {};

// Nodes of 4 GPUs behind one NIC: the 4 inter-node rings run at once and share it, so each gets a
// quarter of its bandwidth (the prediction once gave each the whole NIC, and chose hierarchical
// over a faster tree at 128 ABCI nodes).
TEST_P(HierarchicalSharedNic, MatchesPrediction) {
  const FormulaCase c = GetParam();
  const auto checks = [c] {
    Scenario run;
    run.platform.gpus = c.gpus;
    run.platform.gpus_per_node = 4;
    run.platform.shared_nic = true;
    run.collective = Collective::hierarchical;
    run.bytes = c.bytes;
    run.granularity = c.granularity;
    return check_against_prediction(run, kTolerance);
  };
  EXPECT_IN_CHILD(checks);
}
std::vector<FormulaCase> shared_nic_cases() {
  std::vector<FormulaCase> cases;
  for (const auto& c : formula_cases(Collective::hierarchical)) {
    if (c.gpus >= 8) cases.push_back(c);
  }
  return cases;
}
INSTANTIATE_TEST_SUITE_P(Collectives, HierarchicalSharedNic,
                         ::testing::ValuesIn(shared_nic_cases()), case_name);

class AlltoallFormula : public ::testing::TestWithParam<FormulaCase> {};

// a + (p-1) * m / B on a flat star: a member's p-1 flows share its link.
TEST_P(AlltoallFormula, MatchesAlphaBeta) {
  const FormulaCase c = GetParam();
  const auto checks = [c] {
    Scenario run;
    run.platform.gpus = c.gpus;
    run.collective = Collective::alltoall;
    run.bytes = c.bytes;
    run.granularity = c.granularity;
    const double formula =
        run.platform.inter.latency + (c.gpus - 1) * c.bytes / run.platform.inter.bandwidth;
    std::ostringstream failures;
    const Outcome outcome = simulate(run);
    check_close(failures, describe(run) + " vs formula", outcome.last_finish, formula, kTolerance);
    check_close(failures, describe(run) + " predicted vs formula", outcome.predicted, formula,
                1e-9);
    return failures.str();
  };
  EXPECT_IN_CHILD(checks);
}
INSTANTIATE_TEST_SUITE_P(Collectives, AlltoallFormula,
                         ::testing::ValuesIn(formula_cases(Collective::alltoall)), case_name);

class RingHalfFormula : public ::testing::TestWithParam<FormulaCase> {};

// All-gather and reduce-scatter: (p-1)/p * S/B + (p-1) * a on a flat star, a ring of p-1 steps
// of S/p.
TEST_P(RingHalfFormula, MatchesAlphaBeta) {
  const FormulaCase c = GetParam();
  const auto checks = [c] {
    Scenario run;
    run.platform.gpus = c.gpus;
    run.collective = c.collective;
    run.bytes = c.bytes;
    run.granularity = c.granularity;
    const double p = c.gpus;
    const double formula =
        (p - 1) / p * c.bytes / run.platform.inter.bandwidth + (p - 1) * run.platform.inter.latency;
    std::ostringstream failures;
    check_close(failures, describe(run) + " vs formula", simulate(run).last_finish, formula,
                kTolerance);
    return failures.str();
  };
  EXPECT_IN_CHILD(checks);
}
std::vector<FormulaCase> ring_half_cases() {
  auto cases = formula_cases(Collective::allgather);
  for (const auto& c : formula_cases(Collective::reduce_scatter)) cases.push_back(c);
  return cases;
}
INSTANTIATE_TEST_SUITE_P(Collectives, RingHalfFormula, ::testing::ValuesIn(ring_half_cases()),
                         case_name);

}  // namespace
}  // namespace tessera::sim
