// Failed nodes in the simulator: a job's ranks fill the nodes that are up, each in its place in
// the fabric, so a failed node takes its stragglers out of the job and shifts the job onto the
// next nodes; points whose nodes include a failed one are played in full. (Parsing and the
// points refused: tests/core/cluster_spec_test.cpp.)
#include <gtest/gtest.h>

#include <string>

#include "simulate_first_point.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/simulator/simulate_point.hpp"

namespace tessera {
namespace {

LoadedScenario resnet18_on_dgx1(std::int64_t gpus) {
  return load_scenario_text(
      "name: failed\nmodel: {zoo: resnet18, mini_batch: 32}\n"
      "parallelism: {data: " +
          std::to_string(gpus) + "}\nplatform: {preset: dgx1_v100, nodes: 4}\n",
      "failed.yaml", "");
}

TEST(FailedNodesSim, AFailedNodeTakesItsStragglerOutOfTheJob) {
  auto loaded = resnet18_on_dgx1(8);
  const auto healthy = test::simulate_first_point(loaded);
  loaded.cluster.stragglers = {{StragglerKind::gpu_clock, 3, 0.7}};  // on node 0
  const auto straggling = test::simulate_first_point(loaded);
  ASSERT_GT(straggling.step_seconds, 1.3 * healthy.step_seconds);
  // Node 0 down: the 8 ranks run on node 1, whose GPUs are all nominal.
  loaded.cluster.failed_nodes = {0};
  const auto moved = test::simulate_first_point(loaded);
  EXPECT_DOUBLE_EQ(moved.step_seconds, healthy.step_seconds);
  // Without the straggler, the failed node alone makes the point play in full, saying why.
  loaded.cluster.stragglers.clear();
  const auto without = test::simulate_first_point(loaded);
  EXPECT_DOUBLE_EQ(without.step_seconds, healthy.step_seconds);
  EXPECT_NE(without.note.find("full simulation (every GPU played: failed nodes"), std::string::npos)
      << without.note;
}

TEST(FailedNodesSim, TheJobsNodesShiftPastTheFailedOne) {
  // The slow NICs are on cluster node 2. Healthy, a 2-node job (nodes 0 and 1) misses them;
  // with node 1 down it runs on nodes 0 and 2 and shares node 2's narrower link.
  auto loaded = resnet18_on_dgx1(16);
  loaded.cluster.network.link_bandwidth_bytes_per_second = 1e9;
  loaded.cluster.node.nic_bandwidth_bytes_per_second = 0.25e9;
  loaded.cluster.stragglers = {{StragglerKind::nic_bandwidth, 2, 0.5}};
  const auto missed = test::simulate_first_point(loaded);
  loaded.cluster.failed_nodes = {1};
  const auto shifted = test::simulate_first_point(loaded);
  ASSERT_GT(missed.breakdown.allreduce_seconds, 0.3 * missed.step_seconds);
  EXPECT_GT(shifted.breakdown.allreduce_seconds, 1.3 * missed.breakdown.allreduce_seconds);
  // A failed node beyond the job's changes nothing.
  loaded.cluster.failed_nodes = {3};
  EXPECT_DOUBLE_EQ(test::simulate_first_point(loaded).step_seconds, missed.step_seconds);
}

}  // namespace
}  // namespace tessera
