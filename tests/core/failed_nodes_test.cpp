// Failed nodes: a job's ranks fill the nodes that are up, in order, and every lookup by a job's
// node or rank (group, GPU, stragglers) answers for the cluster's node it runs on; a point needing
// more GPUs than the nodes that are up is refused with the count of failed nodes. A failed GPU
// takes its node out.
#include <gtest/gtest.h>

#include "test_support.hpp"

#include <string>

#include "tessera/core/common/input_error.hpp"
#include "tessera/core/common/yaml_reader.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/scenario/cluster_spec.hpp"

namespace tessera {
namespace {

using test::contains;
using test::input_error;

const std::string kFailedNodesDataDir = TESSERA_TEST_DATA_DIR;

TEST(FailedNodes, JobNodesSkipTheFailedOnes) {
  auto cluster = load_cluster_preset("v100_p100_mixed", {}, "preset");  // v100 0-1, p100 2-3
  EXPECT_EQ(cluster.total_gpus(), 32);
  cluster.failed_nodes = {0, 2};
  EXPECT_EQ(cluster.total_gpus(), 16);
  EXPECT_EQ(cluster.node_of_job_node(0), 1);
  EXPECT_EQ(cluster.node_of_job_node(1), 3);
  EXPECT_EQ(cluster.group_index_of_node(0), 0u);  // cluster node 1: a V100 node
  EXPECT_EQ(cluster.group_index_of_node(1), 1u);  // cluster node 3: a P100 node
  EXPECT_EQ(cluster.group_index_of_rank(8), 1u);
  EXPECT_EQ(cluster.first_node_of_group(1), 1);                   // the job's second node
  cluster.stragglers = {{StragglerKind::gpu_clock, 8 + 5, 0.7},   // cluster node 1, GPU 5
                        {StragglerKind::nic_bandwidth, 3, 0.5}};  // cluster node 3
  EXPECT_DOUBLE_EQ(cluster.gpu_clock_fraction(5), 0.7);
  EXPECT_DOUBLE_EQ(cluster.gpu_clock_fraction(13), 1);
  EXPECT_DOUBLE_EQ(cluster.nic_bandwidth_fraction(1), 0.5);
  EXPECT_DOUBLE_EQ(cluster.nic_bandwidth_fraction(0), 1);
}

TEST(FailedNodes, AreReadSortedAndCheckedFromTheClusterFile) {
  const auto cluster =
      load_cluster_file(kFailedNodesDataDir + "/clusters/two_pcie_nodes_one_failed.yaml");
  EXPECT_EQ(cluster.failed_nodes, std::vector<std::int64_t>{1});
  EXPECT_EQ(cluster.total_gpus(), 2);
  const std::string base = R"(name: t
nodes: 4
gpus_per_node: 2
gpu: {model: g, memory: 16 GB, memory_bandwidth: 900 GB/s, fp32_peak: 15 TFLOP/s}
node: {gpu_interconnect: pcie, pcie_bandwidth: 16 GB/s, pcie_latency: 1 us, host_memory: 64 GB,
       nics: 1, nic_bandwidth: 100 Gb/s, nic_latency: 1 us}
network: {topology: fat_tree, nodes_per_switch: 4, oversubscription: 1, link_bandwidth: 100 Gb/s,
          link_latency: 1 us}
filesystem: {servers: 1, server_bandwidth: 1 GB/s, attachment_bandwidth: 1 GB/s, latency: 1 us}
)";
  auto parse = [&](const std::string& failed) {
    return parse_cluster(parse_yaml_text(base + "failed_nodes: " + failed + "\n", "c.yaml"));
  };
  EXPECT_EQ(parse("[3, 0]").failed_nodes, (std::vector<std::int64_t>{0, 3}));
  // A failed GPU takes its node out (2 GPUs per node: GPU 5 is on node 2), merged with the nodes.
  const auto gpus =
      parse_cluster(parse_yaml_text(base + "failed_nodes: [2]\nfailed_gpus: [5, 0]\n", "c.yaml"));
  EXPECT_EQ(gpus.failed_nodes, (std::vector<std::int64_t>{0, 2}));
  const auto too_many = input_error([&] {
    parse_cluster(parse_yaml_text(base + "failed_nodes: [0, 1]\nfailed_gpus: [4, 7]\n", "c.yaml"));
  });
  EXPECT_EQ(too_many.key(), "failed_gpus");
  EXPECT_TRUE(contains(too_many.problem(), "leaving at least one of the 4 nodes up"));
  for (const std::string bad : {"[4]", "[1, 1]", "[0, 1, 2, 3]", "2"}) {
    SCOPED_TRACE(bad);
    const auto error = input_error([&] { parse(bad); });
    EXPECT_TRUE(contains(error.key(), "failed_nodes")) << error.key();
  }
}

TEST(FailedNodes, APointBeyondTheNodesThatAreUpIsRefused) {
  const std::string scenario =
      "name: f\nmodel: {zoo: resnet18, mini_batch: 4}\n"
      "parallelism: {data: 4}\nplatform: {cluster: " +
      kFailedNodesDataDir + "/clusters/two_pcie_nodes_one_failed.yaml}\n";
  const auto error = input_error([&] { load_scenario_text(scenario, "f.yaml", "."); });
  EXPECT_EQ(error.key(), "parallelism");
  EXPECT_TRUE(contains(error.problem(), "1 failed node")) << error.problem();
  // Two GPUs fit: node 0 is up.
  EXPECT_NO_THROW(load_scenario_text(
      "name: f\nmodel: {zoo: resnet18, mini_batch: 4}\nparallelism: {data: 2}\nplatform: "
      "{cluster: " +
          kFailedNodesDataDir + "/clusters/two_pcie_nodes_one_failed.yaml}\n",
      "f.yaml", "."));
}

}  // namespace
}  // namespace tessera
