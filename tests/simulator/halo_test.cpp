// Halo exchanges as the step player makes them (asynchronous send and receive) take the
// alpha-beta time on a contention-free platform: route latency + bytes / bandwidth, both
// directions at once on full-duplex links. Each case runs in a child process (one SimGrid engine
// per process).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>

#include "tessera/simulator/fabric.hpp"
#include "tessera/simulator/platform/platform.hpp"

namespace tessera::sim {
namespace {

const char* const kPlatform = TESSERA_TEST_DATA_DIR "/platforms/four_gpus.xml";

// Ranks in a line exchange `bytes` with each neighbour; exits 0 if the slowest rank took the
// alpha-beta time within 1%.
void exchange_case(double bytes, int ranks) {
  int argc = 2;
  char name[] = "halo", log[] = "--log=root.thres:critical";
  char* argv[] = {name, log, nullptr};
  simgrid::s4u::Engine engine(&argc, argv);
  engine.set_config("network/model:CM02");
  engine.set_config("network/crosstraffic:0");
  const auto platform = load_xml_platform(engine, kPlatform, "gpu-{i}", ranks, 4);
  const Fabric fabric(platform.gpu_hosts);
  double slowest = 0;
  for (int rank = 0; rank < ranks; ++rank) {
    simgrid::s4u::Actor::create("rank", fabric.host(rank), [&, rank] {
      std::vector<simgrid::s4u::CommPtr> comms;
      for (int peer : {rank - 1, rank + 1}) {
        if (peer < 0 || peer >= ranks) continue;
        comms.push_back(fabric.send_async(rank, peer, bytes));
        comms.push_back(fabric.recv_async(rank, peer));
      }
      for (auto& comm : comms) comm->wait();
      slowest = std::max(slowest, simgrid::s4u::Engine::get_clock());
    });
  }
  engine.run();
  // Every route crosses two 1 us links of 10 GB/s. With two ranks each link direction carries one
  // flow; with more, a middle rank's link carries two (one to each neighbour), halving each.
  const double per_flow = 2e-6 + bytes / 10e9;
  const double expected = ranks > 2 ? 2e-6 + 2 * bytes / 10e9 : per_flow;
  if (std::fabs(slowest - expected) > 0.01 * expected) {
    std::fprintf(stderr, "halo of %.0f bytes over %d ranks took %.9g s, alpha-beta %.9g s\n", bytes,
                 ranks, slowest, expected);
    std::exit(1);
  }
  std::exit(0);
}

TEST(HaloExchange, TwoRanksTakeLatencyPlusBytesOverBandwidth) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(exchange_case(64e6, 2), ::testing::ExitedWithCode(0), "");
  EXPECT_EXIT(exchange_case(4096, 2), ::testing::ExitedWithCode(0), "");
}

TEST(HaloExchange, MiddleRanksShareTheirLinkBetweenBothNeighbours) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(exchange_case(64e6, 4), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace tessera::sim
