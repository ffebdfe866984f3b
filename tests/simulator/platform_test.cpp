// Cluster platforms built from ClusterSpec: GPU counts and host mapping, the links a route
// crosses inside and between nodes and to the file system, route latency and bandwidth against
// the spec, transfer times under CM02, oversubscription, and a 16,384-GPU build.
//
// SimGrid allows one Engine per process, so every platform is built in a child process (a
// "threadsafe" death test) that exits 0 when its checks pass; failures print from the child.
#include <gtest/gtest.h>

#include "child_process_support.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include "tessera/core/scenario/cluster_spec.hpp"
#include "tessera/simulator/platform/platform.hpp"

namespace tessera::sim {
namespace {

namespace s4u = simgrid::s4u;

const std::string kPlatformTestDataDir = TESSERA_TEST_DATA_DIR;

using test::in_own_process;

ClusterSpec preset(const std::string& name) {
  return load_cluster_preset(name, {}, "preset");
}

// A made-up cluster with round figures.
ClusterSpec synthetic(std::int64_t nodes, std::int64_t gpus_per_node, std::int64_t per_switch,
                      double oversubscription) {
  ClusterSpec c;
  c.name = "synthetic";
  c.nodes = nodes;
  c.gpus_per_node = gpus_per_node;
  c.gpu = {.model = "gpu",
           .memory_bytes = 80e9,
           .memory_bandwidth_bytes_per_second = 3e12,
           .fp32_flops_per_second = 60e12};
  c.node = {.gpu_interconnect = GpuInterconnect::nvswitch,
            .gpu_link_bandwidth_bytes_per_second = 400e9,
            .pcie_bandwidth_bytes_per_second = 100e9,
            .host_memory_bytes = 1e12,
            .nics = 1,
            .nic_bandwidth_bytes_per_second = 100e9};
  c.network = {.nodes_per_switch = per_switch,
               .oversubscription = oversubscription,
               .link_bandwidth_bytes_per_second = 10e9};
  c.filesystem = {.servers = 2,
                  .server_bandwidth_bytes_per_second = 1e9,
                  .attachment_bandwidth_bytes_per_second = 2e9};
  return c;
}

struct Route {
  std::vector<std::string> links;
  double latency = 0;
  double bandwidth = std::numeric_limits<double>::infinity();
};

Route route(const s4u::Host* from, const s4u::Host* to) {
  std::vector<s4u::Link*> links;
  Route result;
  from->route_to(to, links, &result.latency);
  for (const auto* link : links) {
    result.links.push_back(link->get_name());
    result.bandwidth = std::min(result.bandwidth, link->get_bandwidth());
  }
  return result;
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.starts_with(prefix);
}

// Simulated time until every flow (one message of `bytes` each, all started at 0) has arrived.
double run_flows(const std::vector<std::pair<s4u::Host*, s4u::Host*>>& flows, double bytes) {
  static int payload = 0;
  double finish = 0;
  for (std::size_t i = 0; i < flows.size(); ++i) {
    auto* mailbox = s4u::Mailbox::by_name("flow" + std::to_string(i));
    s4u::Actor::create("send" + std::to_string(i), flows[i].first,
                       [mailbox, bytes] { mailbox->put(&payload, static_cast<uint64_t>(bytes)); });
    s4u::Actor::create("recv" + std::to_string(i), flows[i].second, [mailbox, &finish] {
      mailbox->get<int>();
      finish = std::max(finish, s4u::Engine::get_clock());
    });
  }
  test::cm02_engine().run();
  return finish;
}

// Resident memory of this process, in MiB (from /proc; 0 where unavailable).
double resident_mib() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      double kib = 0;
      status >> kib;
      return kib / 1024;
    }
    status.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return 0;
}

// Builds and reports wall time and memory on stdout.
SimPlatform timed_build(const ClusterSpec& cluster, std::int64_t gpus) {
  auto& e = test::cm02_engine();
  const double before = resident_mib();
  const auto start = std::chrono::steady_clock::now();
  auto platform = build_cluster_platform(e, cluster, gpus);
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  std::printf(
      "[ platform ] %lld GPUs: built in %.3f s, resident memory +%.0f MiB\n[ platform ] %s\n",
      static_cast<long long>(gpus), took.count(), resident_mib() - before,
      platform.description.c_str());
  return platform;
}

// ---------------------------------------------------------------------------------------------
// Fabric plan (no SimGrid)

TEST(FabricPlan, OneLevelWhenAllNodesFitOneSwitch) {
  const auto plan = plan_fabric(preset("dgx_h100_superpod"), 4);
  EXPECT_EQ(plan.levels, 1);
  EXPECT_EQ(plan.leaves, 5);
  EXPECT_EQ(plan.filesystem_leaf, 4);
  EXPECT_DOUBLE_EQ(plan.link_bandwidth_bytes_per_second, 8 * 50e9);
}

TEST(FabricPlan, TwoLevelsRoundUpToWholeSwitchesPlusOneForTheFileSystem) {
  const auto plan = plan_fabric(preset("lassen"), 512);
  EXPECT_EQ(plan.levels, 2);
  EXPECT_EQ(plan.leaf_switches, 29 + 1);  // ceil(512 / 18) for nodes, one for the file system
  EXPECT_EQ(plan.leaves, 30 * 18);
  EXPECT_EQ(plan.filesystem_leaf, 29 * 18);
  EXPECT_EQ(plan.uplinks_per_leaf_switch, 18);
  EXPECT_DOUBLE_EQ(plan.oversubscription, 1);
}

TEST(FabricPlan, OversubscriptionRoundsToWholeUplinks) {
  const auto plan = plan_fabric(preset("abci"), 1088);
  EXPECT_EQ(plan.uplinks_per_leaf_switch, 11);  // 34 / 3
  EXPECT_NEAR(plan.oversubscription, 34.0 / 11, 1e-12);
}

// ---------------------------------------------------------------------------------------------
// Hosts

TEST(ClusterPlatform, LassenGpusHostsAndFileSystem) {
  in_own_process([] {
    const auto cluster = preset("lassen");
    const auto platform = timed_build(cluster, 2048);
    ASSERT_EQ(platform.gpu_hosts.size(), 2048u);
    ASSERT_EQ(platform.node_hosts.size(), 512u);
    EXPECT_EQ(platform.gpus_per_node, 4);
    for (int rank : {0, 1, 5, 2047}) {
      const auto* host = platform.gpu_hosts[static_cast<std::size_t>(rank)];
      EXPECT_EQ(host->get_name(), "gpu" + std::to_string(rank));
      EXPECT_EQ(host->get_englobing_zone()->get_name(),
                "node" + std::to_string(platform.node_of(rank)));
      EXPECT_DOUBLE_EQ(host->get_speed(), 15.7e12);
    }
    EXPECT_EQ(platform.node_hosts[3]->get_name(), "node3-cpu");
    ASSERT_EQ(platform.filesystem_servers.size(), 16u);
    ASSERT_EQ(platform.filesystem_disks.size(), 16u);
    EXPECT_DOUBLE_EQ(platform.filesystem_disks[0]->get_read_bandwidth(), 25e9);
    EXPECT_EQ(platform.filesystem_disks[0]->get_host(), platform.filesystem_servers[0]);
    EXPECT_EQ(test::cm02_engine().get_host_count(), 2048u + 512u + 16u);
  });
}

TEST(ClusterPlatform, PartialNodeKeepsOnlyTheGpusAsked) {
  in_own_process([] {
    const auto platform = build_cluster_platform(test::cm02_engine(), preset("lassen"), 6);
    EXPECT_EQ(platform.gpu_hosts.size(), 6u);
    EXPECT_EQ(platform.node_hosts.size(), 2u);
  });
}

TEST(ClusterPlatform, GpuCountOutOfRangeThrows) {
  in_own_process([] {
    EXPECT_THROW(build_cluster_platform(test::cm02_engine(), preset("v100_node"), 9),
                 std::invalid_argument);
    EXPECT_THROW(build_cluster_platform(test::cm02_engine(), preset("v100_node"), 0),
                 std::invalid_argument);
  });
}

// ---------------------------------------------------------------------------------------------
// Routes

TEST(ClusterPlatform, LassenRoutesInsideAndBetweenNodes) {
  in_own_process([] {
    const auto cluster = preset("lassen");  // 18 nodes per switch: node 18 is on switch 1
    const auto platform = build_cluster_platform(test::cm02_engine(), cluster, 80);
    const auto& gpu = platform.gpu_hosts;
    const auto& node = cluster.node;
    const double cable = cluster.network.link_latency_seconds;

    const auto intra = route(gpu[0], gpu[1]);
    EXPECT_EQ(intra.links, std::vector<std::string>{"node0-nvlink0-1_UP"});
    EXPECT_DOUBLE_EQ(intra.latency, node.gpu_link_latency_seconds);
    EXPECT_DOUBLE_EQ(intra.bandwidth, 75e9);
    EXPECT_EQ(route(gpu[3], gpu[2]).links, std::vector<std::string>{"node0-nvlink2-3_DOWN"});

    const auto same_switch = route(gpu[0], gpu[5]);
    ASSERT_EQ(same_switch.links.size(), 6u);
    EXPECT_EQ(same_switch.links[0], "node0-pcie0_UP");
    EXPECT_EQ(same_switch.links[1], "node0-nic_UP");
    EXPECT_TRUE(starts_with(same_switch.links[2], "link_from_0_"));
    EXPECT_TRUE(starts_with(same_switch.links[3], "link_from_1_"));
    EXPECT_EQ(same_switch.links[4], "node1-nic_DOWN");
    EXPECT_EQ(same_switch.links[5], "node1-pcie1_DOWN");
    const double ends = 2 * (node.pcie_latency_seconds + node.nic_latency_seconds);
    EXPECT_NEAR(same_switch.latency, ends + 2 * cable, 1e-15);
    EXPECT_DOUBLE_EQ(same_switch.bandwidth, 2 * 12.5e9);  // two EDR rails

    const auto other_switch = route(gpu[0], gpu[18 * 4]);
    EXPECT_EQ(other_switch.links.size(), 8u);
    EXPECT_NEAR(other_switch.latency, ends + 4 * cable, 1e-15);
    EXPECT_DOUBLE_EQ(other_switch.bandwidth, 2 * 12.5e9);
  });
}

TEST(ClusterPlatform, RouteToTheFileSystemCrossesTheFabricAndTheAttachment) {
  in_own_process([] {
    const auto cluster = preset("lassen");
    const auto platform = build_cluster_platform(test::cm02_engine(), cluster, 80);
    const auto to_fs = route(platform.gpu_hosts[0], platform.filesystem_servers[3]);
    ASSERT_GE(to_fs.links.size(), 4u);
    EXPECT_EQ(to_fs.links.front(), "node0-pcie0_UP");
    EXPECT_EQ(to_fs.links[to_fs.links.size() - 2], "filesystem-attachment_UP");
    EXPECT_EQ(to_fs.links.back(), "fs3-link_DOWN");
    const auto& node = cluster.node;
    EXPECT_NEAR(to_fs.latency,
                node.pcie_latency_seconds + node.nic_latency_seconds +
                    4 * cluster.network.link_latency_seconds + cluster.filesystem.latency_seconds,
                1e-15);
    // The fsport's leaf link carries the whole attachment bandwidth.
    const auto fsport = s4u::Link::by_name(to_fs.links[to_fs.links.size() - 3]);
    EXPECT_DOUBLE_EQ(fsport->get_bandwidth(), 400e9);
    EXPECT_DOUBLE_EQ(to_fs.bandwidth, 25e9);  // the node's NICs and the server's disk

    const auto from_fs = route(platform.filesystem_servers[3], platform.gpu_hosts[0]);
    EXPECT_EQ(from_fs.links.front(), "fs3-link_UP");
    EXPECT_EQ(from_fs.links.back(), "node0-pcie0_DOWN");
  });
}

TEST(ClusterPlatform, NvswitchRoutesCrossBothGpusLinks) {
  in_own_process([] {
    const auto cluster = preset("dgx_h100_superpod");
    const auto platform = build_cluster_platform(test::cm02_engine(), cluster, 16);
    const auto intra = route(platform.gpu_hosts[2], platform.gpu_hosts[7]);
    EXPECT_EQ(intra.links,
              (std::vector<std::string>{"node0-nvswitch2_UP", "node0-nvswitch7_DOWN"}));
    EXPECT_DOUBLE_EQ(intra.latency, 2 * cluster.node.gpu_link_latency_seconds);
    EXPECT_DOUBLE_EQ(intra.bandwidth, 450e9);
    EXPECT_DOUBLE_EQ(route(platform.gpu_hosts[0], platform.gpu_hosts[8]).bandwidth, 64e9);
  });
}

TEST(ClusterPlatform, PcieGpusTalkOverTheirPcieLinks) {
  in_own_process([] {
    const auto cluster = load_cluster_file(kPlatformTestDataDir + "/clusters/two_pcie_nodes.yaml");
    const auto platform = build_cluster_platform(test::cm02_engine(), cluster, 4);
    EXPECT_EQ(route(platform.gpu_hosts[0], platform.gpu_hosts[1]).links,
              (std::vector<std::string>{"node0-pcie0_UP", "node0-pcie1_DOWN"}));
    EXPECT_EQ(route(platform.gpu_hosts[1], platform.node_hosts[0]).links,
              std::vector<std::string>{"node0-pcie1_UP"});
    EXPECT_EQ(platform.fabric.levels, 1);
  });
}

// ---------------------------------------------------------------------------------------------
// Simulated transfers (CM02, no cross-traffic)

TEST(ClusterPlatform, IntraNodeTransferTakesAlphaBetaTime) {
  in_own_process([] {
    const auto cluster = preset("dgx_h100_superpod");
    const auto platform = build_cluster_platform(test::cm02_engine(), cluster, 8);
    const double bytes = 1e9;
    const double seconds = run_flows({{platform.gpu_hosts[0], platform.gpu_hosts[1]}}, bytes);
    const double expected = 2 * cluster.node.gpu_link_latency_seconds +
                            bytes / cluster.node.gpu_link_bandwidth_bytes_per_second;
    EXPECT_NEAR(seconds, expected, 1e-9 * expected);
  });
}

// Four flows from the nodes of leaf switch 0 to those of leaf switch 1 (4 nodes per switch, one
// GPU each, 10 GB/s fabric links, zero latencies): 1:1 gives each flow its own uplink, 4:1 makes
// them share one.
double cross_switch_seconds(double oversubscription) {
  const auto cluster = synthetic(8, 1, 4, oversubscription);
  const auto platform = build_cluster_platform(test::cm02_engine(), cluster, 8);
  EXPECT_EQ(platform.fabric.levels, 2);
  std::vector<std::pair<s4u::Host*, s4u::Host*>> flows;
  for (std::size_t i = 0; i < 4; ++i)
    flows.emplace_back(platform.gpu_hosts[i], platform.gpu_hosts[4 + i]);
  return run_flows(flows, 1e9);
}

TEST(ClusterPlatform, FullBisectionGivesEveryFlowALink) {
  in_own_process([] { EXPECT_NEAR(cross_switch_seconds(1), 0.1, 1e-9); });
}

TEST(ClusterPlatform, OversubscriptionSharesTheUplinks) {
  in_own_process([] { EXPECT_NEAR(cross_switch_seconds(4), 0.4, 1e-9); });
}

// ---------------------------------------------------------------------------------------------
// Scale

TEST(ClusterPlatform, Builds16384Gpus) {
  in_own_process([] {
    const auto cluster = synthetic(2048, 8, 32, 1);
    const auto start = std::chrono::steady_clock::now();
    const auto platform = timed_build(cluster, 16384);
    ASSERT_EQ(platform.gpu_hosts.size(), 16384u);
    EXPECT_EQ(platform.fabric.leaf_switches, 64 + 1);
    const auto far = route(platform.gpu_hosts.front(), platform.gpu_hosts.back());
    EXPECT_EQ(far.links.size(), 8u);
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    EXPECT_LT(took.count(), 60.0);
  });
}

}  // namespace
}  // namespace tessera::sim
