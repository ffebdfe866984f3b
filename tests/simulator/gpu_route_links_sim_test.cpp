// The plan's communication bound (core/.../communication_bound.hpp) reasons about links that core
// describes (gpu_route_links) and about the fastest rate SimGrid gives a link
// (fastest_bandwidth_factor); these tests hold both to what the simulator builds and plays: on
// every preset, a route's links inside the nodes are SimGrid's, in order, with the same
// bandwidths; under every network model, no lone transfer beats its link's bandwidth times the
// factor. Every simulation runs in a child process (child_process_support.hpp).
#include <gtest/gtest.h>

#include "child_process_support.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include "tessera/core/plan_search/communication_bound.hpp"
#include "tessera/core/scenario/gpu_route_links.hpp"
#include "tessera/simulator/platform/platform.hpp"

namespace tessera::sim {
namespace {

namespace s4u = simgrid::s4u;
using test::in_own_process;

// The links of a SimGrid route that belong to a node ("node<k>-..."), the fabric's left out.
std::vector<const s4u::Link*> node_links(const s4u::Host* from, const s4u::Host* to) {
  std::vector<s4u::Link*> links;
  double latency = 0;
  from->route_to(to, links, &latency);
  std::vector<const s4u::Link*> kept;
  for (const auto* link : links) {
    if (link->get_name().starts_with("node")) kept.push_back(link);
  }
  return kept;
}

void expect_routes_match(const std::string& preset) {
  const auto cluster = load_cluster_preset(preset, {}, "preset");
  // Two nodes' GPUs (one node where the preset has one): both kinds of route.
  const auto gpus = std::min<std::int64_t>(cluster.total_gpus(), 2 * cluster.gpus_per_node);
  const auto platform = build_cluster_platform(test::cm02_engine(), cluster, gpus);
  for (std::int64_t from = 0; from < gpus; ++from) {
    for (std::int64_t to = 0; to < gpus; ++to) {
      if (from == to) continue;
      const auto described = gpu_route_links(cluster, from, to);
      const auto built = node_links(platform.gpu_hosts[static_cast<std::size_t>(from)],
                                    platform.gpu_hosts[static_cast<std::size_t>(to)]);
      ASSERT_EQ(described.size(), built.size()) << preset << ": " << from << " -> " << to;
      for (std::size_t i = 0; i < built.size(); ++i) {
        EXPECT_EQ(described[i].simgrid_name(), built[i]->get_name())
            << preset << ": " << from << " -> " << to;
        EXPECT_DOUBLE_EQ(described[i].bandwidth_bytes_per_second, built[i]->get_bandwidth())
            << preset << ": " << built[i]->get_name();
      }
    }
  }
}

TEST(GpuRouteLinksSim, EveryPresetsRoutesCrossTheLinksCoreDescribes) {
  for (const auto& preset : cluster_preset_names()) {
    SCOPED_TRACE(preset);
    in_own_process([&] { expect_routes_match(preset); });
  }
}

// The rate of a lone transfer of `bytes` over one link of 1 GB/s, no latency, under `model`.
double lone_transfer_rate(const std::string& model, double bytes) {
  static std::string name = "gpu_route_links_sim_test";
  static std::string log = "--log=root.thres:critical";
  static std::array<char*, 3> argv{name.data(), log.data(), nullptr};
  static int argc = 2;
  static s4u::Engine engine(&argc, argv.data());
  s4u::Engine::set_config("network/model:" + model);
  auto* zone = s4u::create_full_zone("pair");
  auto* sender = zone->create_host("sender", 1e9)->seal();
  auto* receiver = zone->create_host("receiver", 1e9)->seal();
  auto* link = zone->create_link("link", 1e9)->set_latency(0)->seal();
  zone->add_route(sender->get_netpoint(), receiver->get_netpoint(), nullptr, nullptr,
                  {s4u::LinkInRoute(link)}, true);
  zone->seal();
  double finished = 0;
  static int payload = 0;
  s4u::Actor::create("send", sender, [&] {
    s4u::Mailbox::by_name("transfer")->put(&payload, static_cast<std::uint64_t>(bytes));
  });
  s4u::Actor::create("receive", receiver, [&] {
    s4u::Mailbox::by_name("transfer")->get<int>();
    finished = s4u::Engine::get_clock();
  });
  engine.run();
  return bytes / finished;
}

TEST(GpuRouteLinksSim, NoNetworkModelMovesDataFasterThanTheFastestFactorAllows) {
  for (const std::string model : {"CM02", "LV08", "SMPI"}) {
    // Sizes in each band of SMPI's factor table, and beyond.
    for (const double bytes :
         {100.0, 500.0, 1000.0, 3000.0, 5000.0, 7000.0, 9000.0, 12000.0, 30000.0, 1e5, 1e8}) {
      SCOPED_TRACE(model + " at " + std::to_string(bytes) + " bytes");
      in_own_process([&] {
        const double rate = lone_transfer_rate(model, bytes);
        EXPECT_GT(rate, 0);
        EXPECT_LE(rate, 1e9 * fastest_bandwidth_factor(model) * (1 + 1e-9));
      });
    }
  }
}

}  // namespace
}  // namespace tessera::sim
