// A DGX-1's NVLink hybrid cube mesh on the simulated platform: routes take the pair's NVLinks
// (bonded links as one of their summed bandwidth) or PCIe where the pair has none, and an
// all-reduce inside a node runs one ring per channel the links hold, simulated against the
// alpha-beta prediction (both at 1%) and the links' total: 6 rings x 25 GB/s.
// Every simulation runs in a child process (child_process_support.hpp).
#include <gtest/gtest.h>

#include "child_process_support.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>

#include "tessera/core/scenario/cluster_spec.hpp"
#include "tessera/simulator/collectives/collectives.hpp"
#include "tessera/simulator/fabric.hpp"
#include "tessera/simulator/platform/platform.hpp"

namespace tessera::sim {
namespace {

namespace s4u = simgrid::s4u;

using test::in_own_process;

ClusterSpec dgx1() {
  return load_cluster_preset("dgx1_v100", {}, "preset");
}

std::vector<std::string> links_between(const s4u::Host* from, const s4u::Host* to) {
  std::vector<s4u::Link*> links;
  double latency = 0;
  from->route_to(to, links, &latency);
  std::vector<std::string> names;
  for (const auto* link : links) names.push_back(link->get_name());
  return names;
}

TEST(NvlinkMesh, LinkedPairsTakeTheirNvlinksOthersPcie) {
  in_own_process([] {
    const auto platform = build_cluster_platform(test::cm02_engine(), dgx1(), 8);
    const Fabric fabric(platform.gpu_hosts);
    const auto& gpu = platform.gpu_hosts;
    EXPECT_EQ(links_between(gpu[0], gpu[3]), std::vector<std::string>{"node0-nvlink0-3_UP"});
    EXPECT_DOUBLE_EQ(fabric.route_bandwidth_bytes_per_second(0, 3), 50e9);  // double link
    EXPECT_DOUBLE_EQ(fabric.route_bandwidth_bytes_per_second(0, 1), 25e9);
    // 0 and 5 sit on different sockets without a link: PCIe up and down through both switches.
    EXPECT_EQ(links_between(gpu[0], gpu[5]),
              (std::vector<std::string>{"node0-pcie0_UP", "node0-pcie-switch0_UP",
                                        "node0-pcie-switch2_DOWN", "node0-pcie5_DOWN"}));
    EXPECT_DOUBLE_EQ(fabric.route_bandwidth_bytes_per_second(0, 5), 15.75e9);
  });
}

// Simulated time of an all-reduce of `bytes` by every GPU of the platform.
double simulate_allreduce(const SimPlatform& platform, double bytes, AllreduceAlgorithm algorithm,
                          Granularity granularity, double* predicted) {
  const Fabric fabric(platform.gpu_hosts);
  const CollectiveContext context{fabric, platform.gpus_per_node, 1, granularity,
                                  1,      &platform.node_rings};
  std::vector<int> members(platform.gpu_hosts.size());
  for (std::size_t i = 0; i < members.size(); ++i) members[i] = static_cast<int>(i);
  *predicted = predicted_allreduce_seconds(context, members, bytes, algorithm);
  double last = 0;
  for (std::size_t index = 0; index < members.size(); ++index) {
    s4u::Actor::create("member" + std::to_string(index), platform.gpu_hosts[index], [&, index] {
      allreduce(context, members, index, bytes, algorithm);
      last = std::max(last, s4u::Engine::get_clock());
    });
  }
  test::cm02_engine().run();
  return last;
}

void expect_ring_inside_a_node(Granularity granularity) {
  const auto platform = build_cluster_platform(test::cm02_engine(), dgx1(), 8);
  const double bytes = 100e6;
  double predicted = 0;
  const double simulated =
      simulate_allreduce(platform, bytes, AllreduceAlgorithm::ring, granularity, &predicted);
  // Six rings of 25 GB/s links, 14 steps of 1 us each.
  const double formula = 2.0 * 7 / 8 * bytes / (6 * 25e9) + 14 * 1e-6;
  EXPECT_NEAR(predicted, formula, 0.01 * formula);
  EXPECT_NEAR(simulated, predicted, 0.01 * predicted);
}

TEST(NvlinkMesh, RingAllreduceInsideANodeRunsSixChannels) {
  in_own_process([] { expect_ring_inside_a_node(Granularity::aggregated); });
}

TEST(NvlinkMesh, RingAllreduceInsideANodeRunsSixChannelsMessageByMessage) {
  in_own_process([] { expect_ring_inside_a_node(Granularity::message); });
}

// Across two nodes: the hierarchical algorithm's node phases take the six channels, and its
// eight inter-node rings share the node's NICs (50 GB/s), which the contention-free prediction
// leaves out: 2 * 7/8 * S / (6 * 25 GB/s) + 8 * (S/8) / 50 GB/s, plus latencies.
TEST(NvlinkMesh, HierarchicalAcrossTwoNodesTakesTheChannels) {
  in_own_process([] {
    const auto platform = build_cluster_platform(test::cm02_engine(), dgx1(), 16);
    const double bytes = 100e6;
    double predicted = 0;
    const double simulated = simulate_allreduce(platform, bytes, AllreduceAlgorithm::hierarchical,
                                                Granularity::aggregated, &predicted);
    const double transfers = 2.0 * 7 / 8 * bytes / (6 * 25e9) + bytes / 50e9;
    EXPECT_NEAR(simulated, transfers, 0.01 * transfers);
  });
}

// A ring or chain crossing nodes visits each node's GPUs along NVLinks: the flat ring's hops
// inside a node and the tree's chains never take PCIe. The ring against its prediction.
TEST(NvlinkMesh, RingsAndChainsAcrossNodesFollowTheNvlinks) {
  in_own_process([] {
    const auto cluster = dgx1();
    const auto platform = build_cluster_platform(test::cm02_engine(), cluster, 16);
    const Fabric fabric(platform.gpu_hosts);
    const CollectiveContext context{fabric, 8, 1, Granularity::aggregated, 1, &platform.node_rings};
    std::vector<int> ranks(16);
    for (int i = 0; i < 16; ++i) ranks[static_cast<std::size_t>(i)] = i;
    const MemberGroup& members = member_group(ranks);
    const auto& rings = ring_channels(context, members);
    ASSERT_EQ(rings.size(), 1u);
    for (std::size_t i = 0; i + 1 < 16; ++i) {
      const int from = (*rings.front())[i];
      const int to = (*rings.front())[i + 1];
      if (from / 8 == to / 8) {
        EXPECT_GT(cluster.node.nvlinks_between(from % 8, to % 8), 0) << from << " -> " << to;
      }
    }
    for (const auto& node : node_groups(context, members).nodes) {
      for (std::size_t k = 0; k + 1 < node.size(); ++k) {
        EXPECT_GT(cluster.node.nvlinks_between(members[node[k]] % 8, members[node[k + 1]] % 8), 0);
      }
    }
    double predicted = 0;
    const double simulated = simulate_allreduce(platform, 100e6, AllreduceAlgorithm::ring,
                                                Granularity::aggregated, &predicted);
    EXPECT_NEAR(simulated, predicted, 0.01 * predicted);
  });
}

}  // namespace
}  // namespace tessera::sim
