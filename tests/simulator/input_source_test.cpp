// Where samples come from, played: the file system, the data store's peers, node-local storage,
// or nowhere (synthetic), and the first epoch against steady state.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/strategy/sample_holders.hpp"
#include "tessera/simulator/simulate_point.hpp"

namespace tessera {
namespace {

const std::string kInputClusters = TESSERA_TEST_DATA_DIR "/clusters";

// CosmoFlow-32 on 4 nodes of one GPU, one sample each, read before the step (no prefetch) so
// that the read is the step's exposed I/O: 4 x 32^3 float32 = 524,288 bytes per GPU.
constexpr double kSampleBytes = 4.0 * 32 * 32 * 32 * 4;

PointResult simulate(const std::string& io, const std::string& cluster = "data_store.yaml") {
  const auto loaded = load_scenario_text(R"(
name: input
model: {zoo: cosmoflow, options: {width: 32}, mini_batch: 1}
parallelism: {data: 4}
platform: {cluster: )" + cluster + R"(}
io: )" + io + "\n",
                                         "input.yaml", kInputClusters);
  return sim::simulate_point_isolated(loaded, loaded.points[0], {}).result;
}

TEST(InputSource, SyntheticSamplesAreReadFromNowhere) {
  const auto result = simulate("{format: synthetic, prefetch: false}");
  EXPECT_EQ(result.breakdown.io_seconds, 0);
  EXPECT_EQ(result.input_source, "none");
  EXPECT_EQ(result.first_epoch_step_seconds, result.step_seconds);
}

TEST(InputSource, FileSystemReadsTakeTheBytesOverAServersDisk) {
  const auto result = simulate("{format: hdf5, prefetch: false}");
  EXPECT_EQ(result.input_source, "file_system");
  EXPECT_NEAR(result.breakdown.io_seconds, kSampleBytes / 1e9, 0.01 * kSampleBytes / 1e9);
  EXPECT_EQ(result.first_epoch_step_seconds, result.step_seconds);  // every epoch alike
}

// Each step's 4 samples lie on nodes drawn at random (sample_holders.hpp): a holder of k of
// another node's samples sends them together through its NIC, each at a k-th of 10 GB/s, and a
// node's own sample crosses no network. The read ends with the most loaded holder's flows; the
// step is the median of kStoreDraws (7) draws.
double expected_store_read_seconds(std::uint64_t draw) {
  std::vector<int> sent(4, 0);
  for (std::int64_t node = 0; node < 4; ++node) {
    const auto holder = sample_holder(draw, node, 0, 4);
    if (holder != node) ++sent[static_cast<std::size_t>(holder)];
  }
  return *std::max_element(sent.begin(), sent.end()) * kSampleBytes / 10e9;
}

TEST(InputSource, TheMemoryStoreServesEachSampleFromTheNodeHoldingIt) {
  const auto result = simulate("{format: hdf5, prefetch: false, store: memory}");
  const auto synthetic = simulate("{format: synthetic, prefetch: false}");
  EXPECT_EQ(result.input_source, "peer_memory");
  std::vector<double> reads;
  for (std::uint64_t draw = 0; draw < 7; ++draw) reads.push_back(expected_store_read_seconds(draw));
  std::sort(reads.begin(), reads.end());
  EXPECT_GT(reads.back(), reads.front());  // the draws differ, or this test shows little
  const double median = reads[3];
  EXPECT_NEAR(result.step_seconds - synthetic.step_seconds, median, 0.01 * kSampleBytes / 10e9);
  EXPECT_NE(result.note.find("data store: the median step of 7 plays"), std::string::npos)
      << result.note;
  // No node reads as another: the symmetric mode (the default) plays every GPU.
  EXPECT_NE(result.note.find("full simulation (every GPU played: the data store's holders are "
                             "drawn at random"),
            std::string::npos)
      << result.note;
  // The first epoch read the file system, every sample through a server's 1 GB/s disk.
  EXPECT_NEAR(result.first_epoch_step_seconds - synthetic.step_seconds, kSampleBytes / 1e9,
              0.01 * kSampleBytes / 1e9);
  EXPECT_NE(result.note.find("steady state"), std::string::npos) << result.note;
}

TEST(InputSource, NodeLocalStorageServesTheWholeSampleFromTheNodesDisk) {
  const auto result = simulate("{format: hdf5, prefetch: false, store: node_local}");
  EXPECT_EQ(result.input_source, "node_local_storage");
  EXPECT_NEAR(result.breakdown.io_seconds, kSampleBytes / 2e9, 0.01 * kSampleBytes / 2e9);
}

// Staged before the first step: each node copies its share (4,000 samples over 4 nodes, 524 MB)
// from its file-system server's disk (1 GB/s, the slowest of disk, NIC and its own 2 GB/s disk);
// every epoch, the first too, then reads the staged copy.
TEST(InputSource, StagingCopiesEachNodesShareBeforeTheFirstStep) {
  const auto result = simulate("{format: hdf5, prefetch: false, store: node_local, samples: 4000}");
  const double share = 4000 * kSampleBytes / 4;
  EXPECT_NEAR(result.staging_seconds, share / 1e9, 0.01 * share / 1e9);
  EXPECT_EQ(result.input_source, "node_local_storage");
  EXPECT_EQ(result.first_epoch_step_seconds, result.step_seconds);
  EXPECT_NE(result.note.find("stages its share"), std::string::npos) << result.note;
  // Two nodes to a server halve what each gets of it.
  const auto shared = simulate("{format: hdf5, prefetch: false, store: node_local, samples: 4000}",
                               "data_store_two_servers.yaml");
  EXPECT_NEAR(shared.staging_seconds, 2 * share / 1e9, 0.02 * share / 1e9);
  // Without io.samples the share is not known: nothing is timed.
  EXPECT_EQ(simulate("{format: hdf5, prefetch: false, store: node_local}").staging_seconds, 0);
  EXPECT_EQ(
      simulate("{format: hdf5, prefetch: false, store: memory, samples: 4000}").staging_seconds, 0);
}

TEST(InputSource, AStoreTooSmallForItsShareReadsTheFileSystemAndSaysWhy) {
  // 8,000 samples of 524,288 bytes over 4 nodes: 1.05 GB a node, more than its 1 GB.
  const auto result = simulate("{format: hdf5, prefetch: false, store: memory, samples: 8000}");
  EXPECT_EQ(result.input_source, "file_system");
  EXPECT_NE(result.note.find("does not fit"), std::string::npos) << result.note;
  const auto fits = simulate("{format: hdf5, prefetch: false, store: memory, samples: 7000}");
  EXPECT_EQ(fits.input_source, "peer_memory");
}

TEST(InputSource, Int16FilesHalveTheBytesRead) {
  const auto result = simulate("{format: hdf5, prefetch: false, stored_dtype: int16}");
  EXPECT_NEAR(result.breakdown.io_seconds, kSampleBytes / 2 / 1e9, 0.01 * kSampleBytes / 2e9);
}

TEST(InputSource, ThePageCacheServesLaterEpochsFromTheNodesOwnMemory) {
  // 7,000 samples over 4 nodes: 0.92 GB a node fits its 1 GB; 8,000 do not.
  const auto cached = simulate("{format: hdf5, prefetch: false, store: page_cache, samples: 7000}");
  EXPECT_EQ(cached.input_source, "page_cache");
  EXPECT_LT(cached.breakdown.io_seconds, 1e-6);  // no disk, no network; PCIe is unbounded here
  EXPECT_NEAR(cached.first_epoch_step_seconds - cached.step_seconds, kSampleBytes / 1e9,
              0.01 * kSampleBytes / 1e9);
  const auto too_big =
      simulate("{format: hdf5, prefetch: false, store: page_cache, samples: 8000}");
  EXPECT_EQ(too_big.input_source, "file_system");
  EXPECT_NE(too_big.note.find("does not fit"), std::string::npos) << too_big.note;
}

TEST(InputSource, TheCopyToTheGpuMovesTheConvertedSample) {
  // PCIe at 1 GB/s is the only bottleneck of a cached read: the host converted the int16 file
  // to float32, so the copy moves the whole float32 sample, not the 2-byte values read.
  const auto result = simulate(
      "{format: hdf5, prefetch: false, stored_dtype: int16, store: page_cache, samples: 100}",
      "data_store_slow_pcie.yaml");
  EXPECT_EQ(result.input_source, "page_cache");
  EXPECT_NEAR(result.breakdown.io_seconds, kSampleBytes / 1e9, 0.01 * kSampleBytes / 1e9);
}

TEST(InputSource, PrefetchedReadsHideBehindCompute) {
  const auto result = simulate("{format: hdf5, store: memory}");
  EXPECT_EQ(result.breakdown.io_seconds, 0);  // 39 us of reads behind a longer step
}

TEST(InputSource, TheTraceShowsEachReadOnTheInputTrack) {
  const auto loaded = load_scenario_text(R"(
name: input
model: {zoo: cosmoflow, options: {width: 32}, mini_batch: 1}
parallelism: {data: 4}
platform: {cluster: data_store.yaml}
io: {format: hdf5, store: node_local}
)",
                                         "input.yaml", kInputClusters);
  sim::SimulationOptions options;
  options.trace = true;
  const auto trace = sim::simulate_point_isolated(loaded, loaded.points[0], options).trace;
  int reads = 0;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] != "X" || event["tid"] != 2) continue;
    ++reads;
    EXPECT_EQ(event["cat"], "io");
    EXPECT_NEAR(event["dur"].get<double>(), 1e6 * kSampleBytes / 2e9,
                0.01 * 1e6 * kSampleBytes / 2e9);
  }
  EXPECT_EQ(reads, 1);  // GPU 0, the traced one, reads once a step
}

}  // namespace
}  // namespace tessera
