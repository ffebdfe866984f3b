// Collectives simulated message by message against the aggregated model, with and without
// competing traffic on one of their links; members standing for replicas (symmetric mode); the
// size-based choice of all-reduce algorithm (collectives_test_support.hpp).
#include <gtest/gtest.h>

#include "collectives_test_support.hpp"

namespace tessera::sim {
namespace {

using namespace collectives_test;

// ---------------------------------------------------------------------------------------------
// Aggregated against message granularity, with competing traffic on a link of the collective

struct GranularityCase {
  Collective collective;
  int gpus;
  int gpus_per_node;
  double bytes;
  double cross_bytes;
  int cross_target;
  double tolerance;
};

std::string granularity_case_name(const ::testing::TestParamInfo<GranularityCase>& info) {
  const GranularityCase& c = info.param;
  return name_of(c.collective) + "_p" + std::to_string(c.gpus) + "_g" +
         std::to_string(c.gpus_per_node) + "_" + std::to_string(static_cast<int>(c.bytes / kMB)) +
         "MB_cross" + std::to_string(static_cast<int>(c.cross_bytes / kMB)) + "MB";
}

class AggregatedVsMessage : public ::testing::TestWithParam<GranularityCase> {};

Scenario granularity_run(const GranularityCase& c, Granularity granularity) {
  Scenario run;
  run.platform.gpus = c.gpus;
  run.platform.gpus_per_node = c.gpus_per_node;
  run.collective = c.collective;
  run.bytes = c.bytes;
  run.granularity = granularity;
  run.cross_bytes = c.cross_bytes;
  run.cross_target = c.cross_target;
  return run;
}

// Runs one simulation in a forked process of its own (one Engine per process) and returns its
// time, -1 on failure: lets one child compare several simulations.
double simulate_in_grandchild(const Scenario& run) {
  std::array<int, 2> pipe_ends{};
  if (::pipe(pipe_ends.data()) != 0) return -1;
  std::cout.flush();  // or the child would print the buffered lines again
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(pipe_ends[0]);
    const double seconds = simulate(run).last_finish;
    const auto written = ::write(pipe_ends[1], &seconds, sizeof seconds);
    std::_Exit(written == sizeof seconds ? 0 : 1);
  }
  ::close(pipe_ends[1]);
  double seconds = -1;
  if (::read(pipe_ends[0], &seconds, sizeof seconds) != sizeof seconds) seconds = -1;
  ::close(pipe_ends[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return seconds;
}

TEST_P(AggregatedVsMessage, AgreeWithinTolerance) {
  const GranularityCase c = GetParam();
  const auto checks = [c] {
    std::ostringstream failures;
    const Scenario message = granularity_run(c, Granularity::message);
    const Scenario aggregated = granularity_run(c, Granularity::aggregated);
    const double message_seconds = simulate_in_grandchild(message);
    const double aggregated_seconds = simulate_in_grandchild(aggregated);
    if (message_seconds <= 0 || aggregated_seconds <= 0)
      return std::string("a simulation failed\n");
    check_close(failures, describe(aggregated) + " vs message", aggregated_seconds, message_seconds,
                c.tolerance);
    if (c.cross_bytes > 0) {
      // Both granularities see the competing flow: slower than without it.
      Scenario quiet = aggregated;
      quiet.cross_bytes = 0;
      const double uncontended = simulate_in_grandchild(quiet);
      std::cout << describe(aggregated) << ": uncontended " << uncontended << " s\n";
      for (double seconds : {message_seconds, aggregated_seconds}) {
        if (!(seconds > 1.05 * uncontended)) {
          failures << describe(aggregated) << ": " << seconds
                   << " s is not slower than the uncontended " << uncontended << " s\n";
        }
      }
    }
    return failures.str();
  };
  EXPECT_IN_CHILD(checks);
}

INSTANTIATE_TEST_SUITE_P(
    Collectives, AggregatedVsMessage,
    ::testing::Values(
        GranularityCase{Collective::ring, 4, 1, 100 * kMB, 0, 0, kTolerance},
        GranularityCase{Collective::ring, 8, 1, 10 * kMB, 0, 0, kTolerance},
        // GPU 0's down link also carries the ring's flow from GPU 7.
        GranularityCase{Collective::ring, 8, 1, 100 * kMB, 50 * kMB, 0, kTolerance},
        GranularityCase{Collective::ring, 8, 1, 100 * kMB, 500 * kMB, 0, kTolerance},
        GranularityCase{Collective::hierarchical, 8, 4, 100 * kMB, 0, 0, kTolerance},
        // GPU 0's inter-node down link carries the inter-node ring of local index 0.
        GranularityCase{Collective::hierarchical, 16, 4, 100 * kMB, 20 * kMB, 0, kTolerance},
        GranularityCase{Collective::tree, 8, 1, 100 * kMB, 0, 0, kTolerance},
        GranularityCase{Collective::tree, 8, 2, 10 * kMB, 0, 0, kTolerance},
        GranularityCase{Collective::tree, 16, 4, 100 * kMB, 0, 0, kTolerance},
        GranularityCase{Collective::tree, 32, 4, 100 * kMB, 0, 0, kTolerance},
        // GPU 2 has four tree edges (children 1 and 3 and parent 4 in tree 0, its parent in tree
        // 1), so its down link carries four tree flows besides the competing one; the message
        // level keeps one chunk transferring per edge, direction and tree, so the competing flow
        // takes the same share from both granularities (+25%). 500 MB outlasts the all-reduce.
        GranularityCase{Collective::tree, 8, 1, 100 * kMB, 50 * kMB, 2, kTolerance},
        GranularityCase{Collective::tree, 8, 1, 100 * kMB, 500 * kMB, 2, kTolerance},
        // GPU 8 leads node 2, interior in node tree 0 (0 -> 2 -> {1, 3}): four node-tree edges on
        // its NIC.
        GranularityCase{Collective::tree, 16, 4, 100 * kMB, 50 * kMB, 8, kTolerance}),
    granularity_case_name);

// ---------------------------------------------------------------------------------------------
// Choice of algorithm

// Symmetric mode: members standing for `replicas` copies of themselves take the whole group's
// time, by the formulas for the whole group (ring: 4 GPUs for 16; hierarchical: 2 nodes of 4 for
// 8 nodes). The tree's node trees over fewer nodes load the leaders' ports differently, so it is
// compared with the full simulation in symmetry_test.cpp instead.
TEST(ReplicatedMembers, RingTakesTheWholeGroupsTime) {
  EXPECT_IN_CHILD([] {
    Scenario run;
    run.platform.gpus = 4;
    run.replicas = 4;
    run.bytes = 100 * kMB;
    const double p = 16;
    const double formula = 2 * (p - 1) / p * run.bytes / run.platform.inter.bandwidth +
                           2 * (p - 1) * run.platform.inter.latency;
    std::ostringstream failures;
    const Outcome outcome = simulate(run);
    check_close(failures, describe(run) + " x4 vs formula", outcome.last_finish, formula, 1e-9);
    check_close(failures, describe(run) + " x4 predicted", outcome.predicted, formula, 1e-9);
    return failures.str();
  });
}

TEST(ReplicatedMembers, HierarchicalTakesTheWholeGroupsTime) {
  EXPECT_IN_CHILD([] {
    Scenario run;
    run.platform.gpus = 8;
    run.platform.gpus_per_node = 4;
    run.replicas = 4;
    run.collective = Collective::hierarchical;
    run.bytes = 100 * kMB;
    const double g = 4;
    const double n = 8;
    const auto& intra = run.platform.intra;
    const auto& inter = run.platform.inter;
    const double formula =
        2 * (g - 1) / g * run.bytes / intra.bandwidth + 2 * (g - 1) * intra.latency +
        2 * (n - 1) / n * (run.bytes / g) / inter.bandwidth + 2 * (n - 1) * inter.latency;
    std::ostringstream failures;
    const Outcome outcome = simulate(run);
    check_close(failures, describe(run) + " x4 vs formula", outcome.last_finish, formula, 1e-9);
    check_close(failures, describe(run) + " x4 predicted", outcome.predicted, formula, 1e-9);
    return failures.str();
  });
}

TEST(ChooseAllreduce, TreeForTinyMessagesRingOrHierarchicalForLarge) {
  const auto checks = [] {
    std::ostringstream failures;
    PlatformSpec spec;
    spec.gpus = 64;
    spec.gpus_per_node = 8;
    const Platform platform = build(spec);
    const Fabric fabric(platform.gpus);
    std::vector<int> members(platform.gpus.size());
    for (std::size_t i = 0; i < members.size(); ++i) members[i] = static_cast<int>(i);
    const CollectiveContext flat{fabric, 1, 1, Granularity::aggregated};
    const CollectiveContext nodes{fabric, spec.gpus_per_node, 1, Granularity::aggregated};
    auto expect = [&](const CollectiveContext& context, double bytes,
                      std::vector<AllreduceAlgorithm> allowed, const std::string& what) {
      const AllreduceAlgorithm chosen = choose_allreduce(context, members, bytes);
      std::cout << what << ": " << to_string(chosen) << "\n";
      if (std::find(allowed.begin(), allowed.end(), chosen) == allowed.end()) {
        failures << what << ": chose " << to_string(chosen) << "\n";
      }
    };
    expect(flat, 1e3, {AllreduceAlgorithm::tree}, "1 KB over 64 ranks");
    expect(nodes, 1e3, {AllreduceAlgorithm::tree}, "1 KB over 8 nodes of 8");
    // Tree: 2*7 chain and 2*3 node-tree hops (44 us) against hierarchical's 2*7 + 2*7 (84 us).
    expect(nodes, 64e3, {AllreduceAlgorithm::tree}, "64 KB over 8 nodes of 8");
    expect(flat, 1e9, {AllreduceAlgorithm::ring}, "1 GB over 64 ranks, nodes ignored");
    expect(nodes, 1e9, {AllreduceAlgorithm::hierarchical}, "1 GB over 8 nodes of 8");
    return failures.str();
  };
  EXPECT_IN_CHILD(checks);
}

}  // namespace
}  // namespace tessera::sim
