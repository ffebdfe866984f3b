// Cluster files with several node groups and straggler annotations (cluster_spec.hpp).
#include <gtest/gtest.h>

#include <string>

#include "tessera/core/common/yaml_reader.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/scenario/cluster_spec.hpp"

namespace tessera {
namespace {

TEST(NodeGroups, TheMixedPresetNumbersNodesGroupByGroup) {
  const auto cluster = load_cluster_preset("v100_p100_mixed", {}, "platform.preset");
  ASSERT_EQ(cluster.groups.size(), 2u);
  EXPECT_EQ(cluster.nodes, 4);
  EXPECT_EQ(cluster.gpus_per_node, 8);
  EXPECT_EQ(cluster.total_gpus(), 32);
  EXPECT_FALSE(cluster.uniform());
  EXPECT_EQ(cluster.group_index_of_node(0), 0u);
  EXPECT_EQ(cluster.group_index_of_node(1), 0u);
  EXPECT_EQ(cluster.group_index_of_node(2), 1u);
  EXPECT_EQ(cluster.group_index_of_node(3), 1u);
  EXPECT_EQ(cluster.gpu_of_node(1).model, "V100-SXM2-16GB");
  EXPECT_EQ(cluster.gpu_of_node(2).model, "P100-SXM2-16GB");
  EXPECT_DOUBLE_EQ(cluster.node_spec_of_node(3).gpu_link_bandwidth_bytes_per_second, 20e9);
  // The reference GPU (memory capacity, default roofline) is the first group's.
  EXPECT_EQ(cluster.gpu.model, "V100-SXM2-16GB");
}

TEST(NodeGroups, AFileWithoutGroupsIsOneUniformGroup) {
  const auto cluster = load_cluster_preset("lassen", {}, "platform.preset");
  ASSERT_EQ(cluster.groups.size(), 1u);
  EXPECT_TRUE(cluster.uniform());
  EXPECT_EQ(cluster.groups.front().nodes, cluster.nodes);
  EXPECT_EQ(cluster.group_index_of_node(cluster.nodes + 5), 0u);
}

TEST(NodeGroups, StragglersMultiplyTheirFractions) {
  const std::string text = R"(
name: stragglers
model: {zoo: resnet18, mini_batch: 8}
parallelism: {data: 16}
platform:
  preset: v100_p100_mixed
)";
  auto cluster = load_scenario_text(text, "s.yaml", "").cluster;
  cluster.stragglers = {{StragglerKind::gpu_clock, 5, 0.7},
                        {StragglerKind::gpu_clock, 5, 0.5},
                        {StragglerKind::nic_bandwidth, 2, 0.5}};
  EXPECT_DOUBLE_EQ(cluster.gpu_clock_fraction(5), 0.35);
  EXPECT_DOUBLE_EQ(cluster.gpu_clock_fraction(4), 1.0);
  EXPECT_DOUBLE_EQ(cluster.nic_bandwidth_fraction(2), 0.5);
  EXPECT_DOUBLE_EQ(cluster.nic_bandwidth_fraction(5), 1.0);
  EXPECT_FALSE(cluster.uniform());
}

TEST(NodeGroups, StragglersAreReadFromTheClusterFile) {
  const auto cluster = parse_cluster(parse_yaml_text(R"(
name: one-slow-gpu
node_groups:
  - name: a
    nodes: 2
    gpus_per_node: 2
    gpu: {model: g, memory: 16 GB, memory_bandwidth: 900 GB/s, fp32_peak: 15 TFLOP/s}
    node: {gpu_interconnect: pcie, pcie_bandwidth: 16 GB/s, pcie_latency: 1 us,
           host_memory: 256 GB, nics: 1, nic_bandwidth: 100 Gb/s, nic_latency: 1 us}
stragglers:
  - {gpu: 3, clock: 0.7}
  - {node: 1, nic_bandwidth: 0.5}
network: {topology: fat_tree, nodes_per_switch: 18, oversubscription: 1,
          link_bandwidth: 100 Gb/s, link_latency: 0.5 us}
filesystem: {servers: 1, server_bandwidth: 2 GB/s, attachment_bandwidth: 16 GB/s,
             latency: 10 us}
)",
                                                     "one_slow_gpu.yaml"));
  ASSERT_EQ(cluster.stragglers.size(), 2u);
  EXPECT_EQ(cluster.stragglers[0].kind, StragglerKind::gpu_clock);
  EXPECT_EQ(cluster.stragglers[0].index, 3);
  EXPECT_DOUBLE_EQ(cluster.gpu_clock_fraction(3), 0.7);
  EXPECT_DOUBLE_EQ(cluster.nic_bandwidth_fraction(1), 0.5);
  EXPECT_EQ(describe_node_groups(cluster), "2 x 2 g (a), 2 stragglers");
}

}  // namespace
}  // namespace tessera
