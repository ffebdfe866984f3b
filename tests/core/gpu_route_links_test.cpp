// The links a transfer between two GPUs crosses inside their nodes, as the simulator builds them
// (tests/simulator/gpu_route_links_sim_test.cpp holds the two to each other on every preset).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/core/scenario/gpu_route_links.hpp"

namespace tessera {
namespace {

std::vector<std::string> route_names(const GpuRoute& route) {
  std::vector<std::string> out;
  for (const auto& link : route) out.push_back(link.simgrid_name());
  return out;
}

ClusterSpec two_nodes(GpuInterconnect interconnect) {
  ClusterSpec cluster;
  cluster.gpus_per_node = 4;
  cluster.nodes = 2;
  cluster.node.gpu_interconnect = interconnect;
  cluster.node.gpu_link_bandwidth_bytes_per_second = 100e9;
  cluster.node.pcie_bandwidth_bytes_per_second = 16e9;
  cluster.node.gpus_per_pcie_switch = 2;
  cluster.node.pcie_switch_bandwidth_bytes_per_second = 12e9;
  cluster.node.nics = 2;
  cluster.node.nic_bandwidth_bytes_per_second = 12.5e9;
  return cluster;
}

TEST(GpuRouteLinks, OtherNodesAreReachedThroughPcieAndBothNodesNics) {
  const auto route = gpu_route_links(two_nodes(GpuInterconnect::nvswitch), 1, 6);
  EXPECT_EQ(route_names(route), (std::vector<std::string>{"node0-pcie1_UP", "node0-nic_UP",
                                                          "node1-nic_DOWN", "node1-pcie2_DOWN"}));
  EXPECT_DOUBLE_EQ(route[0].bandwidth_bytes_per_second, 16e9);
  EXPECT_DOUBLE_EQ(route[1].bandwidth_bytes_per_second, 25e9);  // two NICs
}

TEST(GpuRouteLinks, AStragglerNicCarriesItsFraction) {
  auto cluster = two_nodes(GpuInterconnect::nvswitch);
  cluster.stragglers.push_back({StragglerKind::nic_bandwidth, 1, 0.5});
  EXPECT_DOUBLE_EQ(gpu_route_links(cluster, 0, 4)[2].bandwidth_bytes_per_second, 12.5e9);
  EXPECT_DOUBLE_EQ(gpu_route_links(cluster, 0, 4)[1].bandwidth_bytes_per_second, 25e9);
}

TEST(GpuRouteLinks, InsideANodeTheInterconnectDecides) {
  EXPECT_EQ(route_names(gpu_route_links(two_nodes(GpuInterconnect::nvswitch), 5, 7)),
            (std::vector<std::string>{"node1-nvswitch1_UP", "node1-nvswitch3_DOWN"}));
  // PCIe: behind one switch through it, else up one switch's uplink and down the other's.
  EXPECT_EQ(route_names(gpu_route_links(two_nodes(GpuInterconnect::pcie), 0, 1)),
            (std::vector<std::string>{"node0-pcie0_UP", "node0-pcie1_DOWN"}));
  const auto across = gpu_route_links(two_nodes(GpuInterconnect::pcie), 3, 0);
  EXPECT_EQ(route_names(across),
            (std::vector<std::string>{"node0-pcie3_UP", "node0-pcie-switch1_UP",
                                      "node0-pcie-switch0_DOWN", "node0-pcie0_DOWN"}));
  EXPECT_DOUBLE_EQ(across[1].bandwidth_bytes_per_second, 12e9);
}

TEST(GpuRouteLinks, AMeshPairTakesItsBondedNvlinksInTheDirectionOfTheTransfer) {
  auto cluster = two_nodes(GpuInterconnect::nvlink_mesh);
  cluster.node.nvlinks = {{0, 2, 2}};
  const auto forth = gpu_route_links(cluster, 0, 2);
  const auto back = gpu_route_links(cluster, 2, 0);
  EXPECT_EQ(route_names(forth), std::vector<std::string>{"node0-nvlink0-2_UP"});
  EXPECT_EQ(route_names(back), std::vector<std::string>{"node0-nvlink0-2_DOWN"});
  EXPECT_DOUBLE_EQ(forth[0].bandwidth_bytes_per_second, 200e9);
  EXPECT_NE(forth[0].key(), back[0].key());
  // An unlinked pair talks over PCIe.
  EXPECT_EQ(route_names(gpu_route_links(cluster, 0, 1)),
            (std::vector<std::string>{"node0-pcie0_UP", "node0-pcie1_DOWN"}));
}

}  // namespace
}  // namespace tessera
