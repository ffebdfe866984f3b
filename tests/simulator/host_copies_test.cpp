// vDNN's copies between a GPU and its node's host memory, played on the PCIe link: an idle link
// moves bytes / bandwidth (+ latency); a prefetch shares the link with the input pipeline's
// host-to-device copy of the next sample; an offload (device to host) does not, the link being
// full duplex. The memory in use follows the program's allocations.
#include <gtest/gtest.h>

#include <simgrid/s4u/Engine.hpp>

#include "child_process_support.hpp"
#include "play/step_player.hpp"
#include "process/child_process.hpp"
#include "tessera/core/scenario/cluster_spec.hpp"
#include "tessera/core/strategy/rank_numbering.hpp"
#include "tessera/simulator/fabric.hpp"
#include "tessera/simulator/platform/platform.hpp"

namespace tessera::sim {
namespace {

constexpr double kPcieBytesPerSecond = 10e9;
constexpr double kPcieLatencySeconds = 1e-6;

StepOp op(StepOpKind kind, double bytes) {
  return {.kind = kind,
          .category = OpCategory::offload,
          .label = to_string(kind),
          .layer = 0,
          .bytes = bytes};
}

StepOp read(StepOpKind kind, double bytes) {
  return {.kind = kind,
          .category = OpCategory::io,
          .label = to_string(kind),
          .bytes = bytes,
          .source = InputSource::node_local_storage};
}

// Plays `gpus` GPUs of the test cluster `cluster`, each the same program, in a fresh process (one
// SimGrid engine per process): GPU 0's step time, its exposed offload and I/O time, and its
// memory peak and average.
nlohmann::json play_on(const std::string& cluster_file, std::int64_t gpus,
                       std::vector<StepOp> ops) {
  const auto child = run_in_child(
      [&] {
        auto& engine = test::cm02_engine();
        const auto cluster =
            load_cluster_file(std::string(TESSERA_TEST_DATA_DIR "/clusters/") + cluster_file);
        const auto platform = build_cluster_platform(engine, cluster, gpus);
        const Fabric fabric(platform.gpu_hosts);
        ParallelConfig config;
        config.data = gpus;
        const RankNumbering layout(config);
        StepProgram program;
        program.ops = std::move(ops);
        const std::vector<std::vector<StepProgram>> programs{{program}};
        StepPlayer player(platform, fabric, layout, programs, {});
        player.spawn();
        engine.run();
        const auto& times = player.times().at(0);
        return nlohmann::json{{"step", times.end_seconds},
                              {"offload", times.seconds[static_cast<int>(OpCategory::offload)]},
                              {"io", times.seconds[static_cast<int>(OpCategory::io)]},
                              {"peak", times.memory.peak_bytes()},
                              {"average", times.memory.average_bytes()}};
      },
      false);
  EXPECT_TRUE(child.message.has_value()) << child.captured_stderr;
  EXPECT_FALSE(child.message->contains("error")) << child.message->dump();
  return *child.message;
}

nlohmann::json play(std::vector<StepOp> ops) {
  return play_on("host_copies.yaml", 1, ops);
}

TEST(HostCopies, AnOffloadOnAnIdleLinkTakesBytesOverBandwidth) {
  constexpr double kBytes = 1e9;
  const auto played =
      play({op(StepOpKind::offload_start, kBytes), op(StepOpKind::offload_wait, 0)});
  const double expected = kBytes / kPcieBytesPerSecond + kPcieLatencySeconds;
  EXPECT_NEAR(played["step"].get<double>(), expected, 0.01 * expected);
  EXPECT_NEAR(played["offload"].get<double>(), expected, 0.01 * expected);
}

TEST(HostCopies, APrefetchSharesTheLinkWithTheNextSamplesCopy) {
  constexpr double kBytes = 1e9;
  const auto alone =
      play({op(StepOpKind::prefetch_start, kBytes), op(StepOpKind::prefetch_wait, 0)});
  const auto shared =
      play({read(StepOpKind::read_start, kBytes), op(StepOpKind::prefetch_start, kBytes),
            op(StepOpKind::prefetch_wait, 0), read(StepOpKind::read_wait, 0)});
  // Both host-to-device: two gigabytes through one 10 GB/s direction.
  const double both = 2 * kBytes / kPcieBytesPerSecond;
  EXPECT_NEAR(alone["step"].get<double>(), both / 2, 0.01 * both / 2);
  EXPECT_NEAR(shared["step"].get<double>(), both, 0.01 * both);
  EXPECT_NEAR(shared["offload"].get<double>(), both, 0.01 * both);
}

TEST(HostCopies, AnOffloadDoesNotShareTheLinkWithAHostToDeviceCopy) {
  constexpr double kBytes = 1e9;
  const auto played =
      play({read(StepOpKind::read_start, kBytes), op(StepOpKind::offload_start, kBytes),
            op(StepOpKind::offload_wait, 0), read(StepOpKind::read_wait, 0)});
  const double one = kBytes / kPcieBytesPerSecond;
  EXPECT_NEAR(played["step"].get<double>(), one, 0.01 * one);
}

// Two GPUs behind one PCIe switch share its uplink to the host: each one's offload takes twice
// as long as alone; on the same node without a shared switch, no longer than alone.
TEST(HostCopies, GpusBehindOnePcieSwitchShareItsUplink) {
  constexpr double kBytes = 1e9;
  const std::vector<StepOp> offload{op(StepOpKind::offload_start, kBytes),
                                    op(StepOpKind::offload_wait, 0)};
  const double alone = kBytes / kPcieBytesPerSecond;
  const auto shared = play_on("host_copies_pcie_switch.yaml", 2, offload);
  EXPECT_NEAR(shared["offload"].get<double>(), 2 * alone, 0.01 * 2 * alone);
  const auto own_links = play_on("host_copies_two_gpus.yaml", 2, offload);
  EXPECT_NEAR(own_links["offload"].get<double>(), alone, 0.01 * alone);
}

TEST(HostCopies, MemoryInUseFollowsTheAllocations) {
  // 1 GB for the whole step; 3 GB more during the first half of a 2 s compute.
  StepOp weights = op(StepOpKind::allocate, 1e9);
  StepOp map = op(StepOpKind::allocate, 3e9);
  StepOp first{.kind = StepOpKind::compute, .label = "first", .seconds = 1.0};
  StepOp freed = op(StepOpKind::release, 3e9);
  StepOp second{.kind = StepOpKind::compute, .label = "second", .seconds = 1.0};
  const auto played = play({weights, map, first, freed, second});
  EXPECT_DOUBLE_EQ(played["step"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(played["peak"].get<double>(), 4e9);
  EXPECT_DOUBLE_EQ(played["average"].get<double>(), 2.5e9);
}

}  // namespace
}  // namespace tessera::sim
