#pragma once
// Collectives on small SimGrid platforms built here (CM02 model, no cross-traffic factor): the
// platforms, one collective's simulation against its prediction, and the child processes the
// tests run them in (collectives_test.cpp: against the formulas; collective_granularity_test.cpp:
// aggregated against message level, and the choice of algorithm).
//
// SimGrid allows one Engine per process, so every simulation runs in a child process (a
// "threadsafe" death test) that exits 0 when its checks pass and otherwise prints why and exits 1.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/NetZone.hpp>

#include "tessera/simulator/collectives/collectives.hpp"
#include "tessera/simulator/fabric.hpp"

namespace tessera::sim::collectives_test {

namespace s4u = simgrid::s4u;

constexpr double kMB = 1e6;
constexpr double kTolerance = 0.01;
// The tree's message granularity pays for filling and draining its chunk pipeline, which the
// aggregated model (perfect pipelining, as the prediction) leaves out. Its chunks stay longer than
// two route latencies on the slowest stream (tree_chunk_count), so that cost is small only where
// the transfer is long against the latencies: the message-level tree is compared at 1% at 100 MB
// (measured within 0.5% on every shape here) and, with several nodes, at 10 MB (within 0.9%); at
// 1 MB it differs by up to 7.4% (26% for one node of two GPUs, an 8.7 us all-reduce), so the 1 MB
// cases are aggregated only.
constexpr double kTreeMessageBytes = 100e6;

// ---------------------------------------------------------------------------------------------
// Platforms

// A class of links: each GPU has its own up and down link of `bandwidth` and latency/2, so a route
// between two GPUs (sender's up, receiver's down) has latency `latency`.
struct Tier {
  double bandwidth;  // bytes/s
  double latency;    // seconds per route
};

struct PlatformSpec {
  int gpus = 4;
  int gpus_per_node = 1;  // 1: one flat star; more: two levels (intra-node tier between GPUs of
                          // a node, inter-node tier between nodes)
  Tier inter{12.5e9, 5e-6};
  Tier intra{150e9, 1e-6};
  bool shared_nic = false;  // two levels: a node's GPUs share one inter-node up and down link
};

struct Platform {
  std::vector<s4u::Host*> gpus;
  s4u::Host* cross = nullptr;  // sends competing traffic into GPU 0's inter-node down link
};

inline s4u::Engine& engine() {
  static std::string name = "collectives_test";
  static std::string log = "--log=root.thres:critical";
  static std::array<char*, 3> argv{name.data(), log.data(), nullptr};
  static int argc = 2;
  static s4u::Engine instance(&argc, argv.data());
  return instance;
}

// Flat: a star zone, one split-duplex link per host (including the cross-traffic host). A route
// from the cross host to GPU 0 shares GPU 0's down link with GPU 0's ring predecessor.
inline Platform build_star(const PlatformSpec& spec) {
  Platform platform;
  auto* zone = s4u::create_star_zone("star");
  auto attach = [&](const std::string& name) {
    s4u::Host* host = zone->create_host(name, 1e12);
    s4u::Link* link = zone->create_split_duplex_link(name + "-link", spec.inter.bandwidth)
                          ->set_latency(spec.inter.latency / 2);
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr,
                    {s4u::LinkInRoute(link, s4u::LinkInRoute::Direction::UP)}, true);
    return host;
  };
  for (int gpu = 0; gpu < spec.gpus; ++gpu)
    platform.gpus.push_back(attach("gpu" + std::to_string(gpu)));
  platform.cross = attach("cross");
  zone->seal();
  return platform;
}

// Two levels: a full zone with explicit routes. Each GPU has intra-node up/down links (used between
// GPUs of its node) and its own inter-node up/down links (a rail-like NIC, used between nodes),
// so concurrent inter-node rings do not share links; with `shared_nic` the node's first GPU's
// inter-node links serve all its GPUs (one NIC per node, as Tessera's cluster platforms build).
inline Platform build_two_level(const PlatformSpec& spec) {
  Platform platform;
  auto* zone = s4u::create_full_zone("two-level");
  struct Ports {
    s4u::Link* intra_up;
    s4u::Link* intra_down;
    s4u::Link* inter_up;
    s4u::Link* inter_down;
  };
  std::vector<Ports> ports;
  auto link = [&](const std::string& name, const Tier& tier) {
    return zone->create_link(name, tier.bandwidth)->set_latency(tier.latency / 2)->seal();
  };
  for (int gpu = 0; gpu < spec.gpus; ++gpu) {
    const std::string name = "gpu" + std::to_string(gpu);
    platform.gpus.push_back(zone->create_host(name, 1e12));
    ports.push_back({link(name + "-nv-up", spec.intra), link(name + "-nv-down", spec.intra),
                     link(name + "-nic-up", spec.inter), link(name + "-nic-down", spec.inter)});
  }
  platform.cross = zone->create_host("cross", 1e12);
  s4u::Link* cross_up = link("cross-up", spec.inter);
  // Whose inter-node links a GPU's traffic between nodes takes.
  const auto nic_of = [&](int gpu) {
    return spec.shared_nic ? gpu / spec.gpus_per_node * spec.gpus_per_node : gpu;
  };
  for (int from = 0; from < spec.gpus; ++from) {
    for (int to = 0; to < spec.gpus; ++to) {
      if (from == to) continue;
      const bool same_node = from / spec.gpus_per_node == to / spec.gpus_per_node;
      const auto& out = ports[static_cast<std::size_t>(from)];
      const auto& in = ports[static_cast<std::size_t>(to)];
      const auto& out_nic = ports[static_cast<std::size_t>(nic_of(from))];
      const auto& in_nic = ports[static_cast<std::size_t>(nic_of(to))];
      std::vector<s4u::LinkInRoute> route{
          s4u::LinkInRoute(same_node ? out.intra_up : out_nic.inter_up),
          s4u::LinkInRoute(same_node ? in.intra_down : in_nic.inter_down)};
      zone->add_route(platform.gpus[static_cast<std::size_t>(from)]->get_netpoint(),
                      platform.gpus[static_cast<std::size_t>(to)]->get_netpoint(), nullptr, nullptr,
                      route, false);
    }
    zone->add_route(platform.cross->get_netpoint(),
                    platform.gpus[static_cast<std::size_t>(from)]->get_netpoint(), nullptr, nullptr,
                    {s4u::LinkInRoute(cross_up),
                     s4u::LinkInRoute(ports[static_cast<std::size_t>(nic_of(from))].inter_down)},
                    false);
  }
  zone->seal();
  return platform;
}

inline Platform build(const PlatformSpec& spec) {
  s4u::Engine& e = engine();
  s4u::Engine::set_config("network/model:CM02");
  s4u::Engine::set_config("network/crosstraffic:0");
  (void)e;
  return spec.gpus_per_node == 1 ? build_star(spec) : build_two_level(spec);
}

// ---------------------------------------------------------------------------------------------
// Running one collective

enum class Collective { ring, tree, hierarchical, alltoall, allgather, reduce_scatter };

inline AllreduceAlgorithm algorithm_of(Collective collective) {
  switch (collective) {
    case Collective::tree:
      return AllreduceAlgorithm::tree;
    case Collective::hierarchical:
      return AllreduceAlgorithm::hierarchical;
    default:
      return AllreduceAlgorithm::ring;
  }
}

inline std::string name_of(Collective collective) {
  if (collective == Collective::alltoall) return "alltoall";
  if (collective == Collective::allgather) return "allgather";
  if (collective == Collective::reduce_scatter) return "reduce_scatter";
  return to_string(algorithm_of(collective));
}

struct Scenario {
  PlatformSpec platform;
  Collective collective = Collective::ring;
  double bytes = kMB;  // all-reduce: per member; all-to-all: per peer; all-gather: in all
  Granularity granularity = Granularity::aggregated;
  double cross_bytes = 0;  // competing flow from the cross host, from time 0
  int cross_target = 0;    // GPU receiving the competing flow
  int replicas = 1;        // the members stand for this many copies of themselves (symmetric mode)
};

struct Outcome {
  double first_finish = 0;  // earliest member to return
  double last_finish = 0;   // the collective's time
  double predicted = 0;
};

// One simulation; call it only in a child process.
inline Outcome simulate(const Scenario& run) {
  const Platform platform = build(run.platform);
  const Fabric fabric(platform.gpus);
  const CollectiveContext context{fabric, run.platform.gpus_per_node, 1, run.granularity,
                                  run.replicas};
  std::vector<int> members(platform.gpus.size());
  for (std::size_t i = 0; i < members.size(); ++i) members[i] = static_cast<int>(i);

  Outcome outcome;
  if (run.collective == Collective::alltoall) {
    outcome.predicted = predicted_alltoall_seconds(context, members, run.bytes);
  } else if (run.collective != Collective::allgather &&
             run.collective != Collective::reduce_scatter) {  // checked against their formula
    outcome.predicted =
        predicted_allreduce_seconds(context, members, run.bytes, algorithm_of(run.collective));
  }
  std::vector<double> finish(members.size(), -1);
  for (std::size_t index = 0; index < members.size(); ++index) {
    s4u::Actor::create("member" + std::to_string(index), platform.gpus[index], [&, index] {
      if (run.collective == Collective::alltoall) {
        alltoall(context, members, index, run.bytes);
      } else if (run.collective == Collective::allgather) {
        allgather(context, member_group(members), index, run.bytes);
      } else if (run.collective == Collective::reduce_scatter) {
        reduce_scatter(context, member_group(members), index, run.bytes);
      } else {
        allreduce(context, members, index, run.bytes, algorithm_of(run.collective));
      }
      finish[index] = s4u::Engine::get_clock();
    });
  }
  if (run.cross_bytes > 0) {
    s4u::Actor::create("cross", platform.cross, [&] {
      s4u::Comm::sendto(platform.cross,
                        platform.gpus.at(static_cast<std::size_t>(run.cross_target)),
                        static_cast<std::uint64_t>(run.cross_bytes));
    });
  }
  engine().run();
  outcome.first_finish = *std::min_element(finish.begin(), finish.end());
  outcome.last_finish = *std::max_element(finish.begin(), finish.end());
  return outcome;
}

// Runs `checks` in a child process: it returns what went wrong (empty: all well).
[[noreturn]] inline void exit_with(const std::function<std::string()>& checks) {
  const std::string failures = checks();
  std::cout.flush();
  if (!failures.empty()) std::cerr << failures << std::flush;
  std::_Exit(failures.empty() ? 0 : 1);
}
// "threadsafe": the child re-runs the test from a fresh exec, so no SimGrid state is inherited.
#define EXPECT_IN_CHILD(checks)                                       \
  do {                                                                \
    GTEST_FLAG_SET(death_test_style, "threadsafe");                   \
    EXPECT_EXIT(exit_with(checks), ::testing::ExitedWithCode(0), ""); \
  } while (false)

inline double relative_error(double value, double reference) {
  return std::abs(value - reference) / std::abs(reference);
}

// Appends a failure line unless `value` is within `tolerance` of `reference`; prints the error.
inline void check_close(std::ostringstream& failures, const std::string& what, double value,
                        double reference, double tolerance) {
  const double error = relative_error(value, reference);
  std::cout << what << ": " << value << " vs " << reference << " (relative error " << error
            << ")\n";
  if (!(error <= tolerance)) {
    failures << what << ": " << value << " s, expected " << reference << " s within "
             << tolerance * 100 << "% (off by " << error * 100 << "%)\n";
  }
}

inline std::string describe(const Scenario& run) {
  std::ostringstream text;
  text << name_of(run.collective) << " p=" << run.platform.gpus
       << " g=" << run.platform.gpus_per_node << " S=" << run.bytes / kMB << "MB "
       << (run.granularity == Granularity::message ? "message" : "aggregated");
  if (run.cross_bytes > 0) {
    text << " cross=" << run.cross_bytes / kMB << "MB into GPU " << run.cross_target;
  }
  return text.str();
}

// The simulated time matches the prediction, and aggregated members all finish together.
inline std::string check_against_prediction(const Scenario& run, double tolerance) {
  std::ostringstream failures;
  const Outcome outcome = simulate(run);
  check_close(failures, describe(run) + " vs predicted", outcome.last_finish, outcome.predicted,
              tolerance);
  if (run.granularity == Granularity::aggregated && run.collective != Collective::alltoall &&
      outcome.last_finish - outcome.first_finish > 1e-9 * outcome.last_finish) {
    failures << describe(run) << ": members finished between " << outcome.first_finish << " and "
             << outcome.last_finish << " s\n";
  }
  return failures.str();
}

}  // namespace tessera::sim::collectives_test
