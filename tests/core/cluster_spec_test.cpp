// Cluster files: every preset loads with all its sections, figures come in SI units, defaults
// apply where documented, and bad input names its key (missing section, bad unit, bad choice).
#include <gtest/gtest.h>

#include "test_support.hpp"

#include <string>

#include "tessera/core/common/input_error.hpp"
#include "tessera/core/common/yaml_reader.hpp"
#include "tessera/core/scenario/cluster_spec.hpp"

namespace tessera {
namespace {

using test::contains;
using test::input_error;

const std::string kClusterSpecDataDir = TESSERA_TEST_DATA_DIR;

// A complete cluster file; `replace` swaps one line (found by its start) for another, or drops it.
std::string cluster_text(const std::string& line_start = "", const std::string& replacement = "") {
  std::string text = R"(name: t
nodes: 4
gpus_per_node: 2
gpu:
  model: g
  memory: 16 GB
  memory_bandwidth: 900 GB/s
  fp32_peak: 15 TFLOP/s
node:
  gpu_interconnect: nvswitch
  gpu_link_bandwidth: 300 GB/s
  gpu_link_latency: 1 us
  pcie_bandwidth: 32 GB/s
  pcie_latency: 1 us
  host_memory: 512 GiB
  nics: 4
  nic_bandwidth: 200 Gb/s
  nic_latency: 2 us
network:
  topology: fat_tree
  nodes_per_switch: 2
  oversubscription: 2
  link_bandwidth: 200 Gb/s
  link_latency: 0.5 us
filesystem:
  servers: 4
  server_bandwidth: 5 GB/s
  attachment_bandwidth: 20 GB/s
  latency: 10 us
)";
  if (line_start.empty()) return text;
  const auto begin = text.find(line_start);
  EXPECT_NE(begin, std::string::npos) << line_start;
  const auto end = text.find('\n', begin);
  text.replace(begin, end - begin + 1, replacement.empty() ? "" : replacement + "\n");
  return text;
}

ClusterSpec parse_cluster(const std::string& text) {
  return parse_cluster(parse_yaml_text(text, "cluster.yaml"));
}

// ---------------------------------------------------------------------------------------------
// Figures

TEST(ClusterSpec, ReadsEverySectionInSiUnits) {
  const auto c = parse_cluster(cluster_text());
  EXPECT_EQ(c.node.gpu_interconnect, GpuInterconnect::nvswitch);
  EXPECT_DOUBLE_EQ(c.node.gpu_link_bandwidth_bytes_per_second, 300e9);
  EXPECT_DOUBLE_EQ(c.node.gpu_link_latency_seconds, 1e-6);
  EXPECT_DOUBLE_EQ(c.node.pcie_bandwidth_bytes_per_second, 32e9);
  EXPECT_DOUBLE_EQ(c.node.host_memory_bytes, 512.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(c.node.nics, 4);
  EXPECT_DOUBLE_EQ(c.node.nic_bandwidth_bytes_per_second, 25e9);
  EXPECT_DOUBLE_EQ(c.node.node_nic_bandwidth_bytes_per_second(), 100e9);
  EXPECT_DOUBLE_EQ(c.node.nic_latency_seconds, 2e-6);
  EXPECT_EQ(c.network.topology, NetworkTopology::fat_tree);
  EXPECT_EQ(c.network.nodes_per_switch, 2);
  EXPECT_DOUBLE_EQ(c.network.oversubscription, 2);
  EXPECT_DOUBLE_EQ(c.network.link_bandwidth_bytes_per_second, 25e9);
  EXPECT_DOUBLE_EQ(c.network.link_latency_seconds, 0.5e-6);
  EXPECT_EQ(c.filesystem.servers, 4);
  EXPECT_DOUBLE_EQ(c.filesystem.server_bandwidth_bytes_per_second, 5e9);
  EXPECT_DOUBLE_EQ(c.filesystem.attachment_bandwidth_bytes_per_second, 20e9);
  EXPECT_DOUBLE_EQ(c.filesystem.latency_seconds, 10e-6);
}

TEST(ClusterSpec, GpuEfficienciesDefaultWhenAbsent) {
  const auto c = parse_cluster(cluster_text());
  EXPECT_DOUBLE_EQ(c.gpu.compute_efficiency, 0.7);
  EXPECT_DOUBLE_EQ(c.gpu.memory_efficiency, 0.8);
  EXPECT_DOUBLE_EQ(c.gpu.kernel_launch_latency_seconds, 5e-6);
  EXPECT_TRUE(c.gpu.overlaps_communication);
  EXPECT_EQ(c.gpu.power_watts, 0);  // no power figure: no energy objective
}

TEST(ClusterSpec, EveryPresetGivesItsGpusPowerWithASource) {
  for (const auto& name : cluster_preset_names()) {
    SCOPED_TRACE(name);
    const auto c = load_cluster_preset(name, {}, "platform.preset");
    // From a Quadro RTX 5000's 230 W to an H100 SXM's 700 W.
    EXPECT_GE(c.gpu.power_watts, 200);
    EXPECT_LE(c.gpu.power_watts, 700);
    bool says_source = false;
    for (const auto& source : c.sources) says_source |= contains(source, "GPU power: ");
    EXPECT_TRUE(says_source);
  }
  EXPECT_EQ(load_cluster_preset("lassen", {}, "platform.preset").gpu.power_watts, 300);
  EXPECT_EQ(parse_cluster(cluster_text("  memory: 16 GB", "  memory: 16 GB\n  power: 0.7 kW"))
                .gpu.power_watts,
            700);
}

TEST(ClusterSpec, FileWithPcieNodesAndExplicitEfficiencies) {
  const auto c = load_cluster_file(kClusterSpecDataDir + "/clusters/two_pcie_nodes.yaml");
  EXPECT_EQ(c.total_gpus(), 4);
  EXPECT_DOUBLE_EQ(c.gpu.compute_efficiency, 0.5);
  EXPECT_DOUBLE_EQ(c.gpu.memory_efficiency, 0.9);
  EXPECT_DOUBLE_EQ(c.gpu.kernel_launch_latency_seconds, 8e-6);
  EXPECT_EQ(c.node.gpu_interconnect, GpuInterconnect::pcie);
  // With pcie, the GPU links are the PCIe links.
  EXPECT_DOUBLE_EQ(c.node.gpu_link_bandwidth_bytes_per_second, 16e9);
  EXPECT_DOUBLE_EQ(c.node.gpu_link_latency_seconds, 2e-6);
}

TEST(ClusterSpec, EveryPresetHasAllSectionsAndSaysWhatItAssumes) {
  const auto names = cluster_preset_names();
  EXPECT_GE(names.size(), 6u);
  for (const auto& name : names) {
    SCOPED_TRACE(name);
    const auto c = load_cluster_preset(name, {}, "platform.preset");
    EXPECT_GT(c.node.gpu_link_bandwidth_bytes_per_second, 0);
    EXPECT_GT(c.node.pcie_bandwidth_bytes_per_second, 0);
    EXPECT_GT(c.node.host_memory_bytes, 0);
    EXPECT_GT(c.node.nic_bandwidth_bytes_per_second, 0);
    EXPECT_GE(c.network.oversubscription, 1);
    EXPECT_GT(c.network.link_bandwidth_bytes_per_second, 0);
    EXPECT_GT(c.filesystem.attachment_bandwidth_bytes_per_second, 0);
    bool says_assumption = false;
    for (const auto& source : c.sources) says_assumption |= contains(source, "assumption");
    EXPECT_TRUE(says_assumption);
  }
}

TEST(ClusterSpec, LassenPreset) {
  const auto c = load_cluster_preset("lassen", {}, "platform.preset");
  EXPECT_EQ(c.node.gpu_interconnect, GpuInterconnect::nvlink_mesh);
  // AC922: each V100 has 3 links to its socket's other GPU and 3 to its Power9.
  EXPECT_DOUBLE_EQ(c.node.gpu_link_bandwidth_bytes_per_second, 25e9);
  EXPECT_EQ(c.node.nvlinks_between(0, 1), 3);
  EXPECT_EQ(c.node.nvlinks_between(3, 2), 3);
  EXPECT_EQ(c.node.nvlinks_between(1, 2), 0);  // across the sockets: through the CPUs
  EXPECT_DOUBLE_EQ(c.node.pcie_bandwidth_bytes_per_second, 75e9);
  EXPECT_EQ(c.node.nics, 2);
  EXPECT_DOUBLE_EQ(c.node.node_nic_bandwidth_bytes_per_second(), 25e9);
  EXPECT_DOUBLE_EQ(c.node.host_memory_bytes, 256e9);
}

// The hybrid cube mesh link by link: 16 linked pairs, 8 of them doubled, 6 links per V100.
TEST(ClusterSpec, Dgx1V100Preset) {
  const auto c = load_cluster_preset("dgx1_v100", {}, "platform.preset");
  EXPECT_EQ(c.gpus_per_node, 8);
  EXPECT_EQ(c.gpu.model, "V100-SXM2-16GB");
  EXPECT_DOUBLE_EQ(c.gpu.memory_bytes, 16e9);
  EXPECT_DOUBLE_EQ(c.gpu.fp32_flops_per_second, 15.7e12);
  EXPECT_EQ(c.node.gpu_interconnect, GpuInterconnect::nvlink_mesh);
  EXPECT_DOUBLE_EQ(c.node.gpu_link_bandwidth_bytes_per_second, 25e9);
  EXPECT_EQ(c.node.nvlinks.size(), 16u);
  for (int gpu = 0; gpu < 8; ++gpu) {
    int links = 0;
    for (int peer = 0; peer < 8; ++peer) links += c.node.nvlinks_between(gpu, peer);
    EXPECT_EQ(links, 6) << "GPU " << gpu;
    EXPECT_EQ(c.node.nvlinks_between(gpu, (gpu + 4) % 8), gpu % 4 < 2 ? 2 : 1) << "GPU " << gpu;
  }
  EXPECT_EQ(c.node.nvlinks_between(0, 3), 2);
  EXPECT_EQ(c.node.nvlinks_between(3, 0), 2);
  EXPECT_EQ(c.node.nvlinks_between(0, 5), 0);  // across the sockets: over PCIe
  EXPECT_EQ(c.node.nics, 4);
  EXPECT_DOUBLE_EQ(c.node.node_nic_bandwidth_bytes_per_second(), 50e9);
  EXPECT_DOUBLE_EQ(c.node.host_memory_bytes, 512e9);
}

// Every preset that lists NVLinks gives each GPU the links its GPU model has (V100 6, P100 4),
// less those to a CPU where the CPU speaks NVLink (the Power9 of Lassen's and HAL's IBM AC922
// nodes: 3 per GPU), and the stragglers file keeps dgx1_v100's mesh.
TEST(ClusterSpec, PresetNvlinkMeshesMatchTheirGpus) {
  for (const auto& name : cluster_preset_names()) {
    SCOPED_TRACE(name);
    const auto c = load_cluster_preset(name, {}, "platform.preset");
    for (const auto& group : c.groups) {
      const int cpu_links = contains(c.description, "Power9") ? 3 : 0;
      const int most = (contains(group.gpu.model, "P100") ? 4 : 6) - cpu_links;
      for (int gpu = 0; gpu < group.gpus_per_node && !group.node.nvlinks.empty(); ++gpu) {
        int links = 0;
        for (int peer = 0; peer < group.gpus_per_node; ++peer) {
          links += group.node.nvlinks_between(gpu, peer);
        }
        EXPECT_EQ(links, most) << group.name << " GPU " << gpu;
      }
    }
  }
  const auto healthy = load_cluster_preset("dgx1_v100", {}, "platform.preset");
  const auto stragglers = load_cluster_preset("dgx1_v100_stragglers", {}, "platform.preset");
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      EXPECT_EQ(healthy.node.nvlinks_between(a, b), stragglers.node.nvlinks_between(a, b));
    }
  }
}

// rank_jitter: each measured moment's slowdown of every measured rank; every moment as many
// ranks, each slowdown a ratio near 1 (a percentage or seconds is refused).
TEST(ClusterSpec, RankJitterListsEveryRanksSlowdownAtEachMoment) {
  EXPECT_TRUE(parse_cluster(cluster_text()).jitter.empty());
  const auto with = [](const std::string& moments) {
    return cluster_text() + "rank_jitter:\n  slowdowns:\n" + moments;
  };
  const auto c = parse_cluster(with("    - [1.02, 0.97]\n    - [0.99, 1.13]\n"));
  ASSERT_EQ(c.jitter.moments(), 2u);
  EXPECT_EQ(c.jitter.slowdowns[1][1], 1.13);
  auto error = input_error([&] { parse_cluster(with("    - [1.02, 0.97]\n    - [0.99]\n")); });
  EXPECT_EQ(error.key(), "rank_jitter.slowdowns[1]");
  EXPECT_TRUE(contains(error.what(), "as many ranks as the first moment (2)")) << error.what();
  error = input_error([&] { parse_cluster(with("    - [1.02, 97]\n")); });
  EXPECT_EQ(error.key(), "rank_jitter.slowdowns[0][1]");
  error = input_error([&] { parse_cluster(cluster_text() + "rank_jitter: {moments: 3}\n"); });
  EXPECT_TRUE(contains(error.what(), "slowdowns")) << error.what();
}

TEST(ClusterSpec, NvlinkMeshWithoutAListLinksEveryPairOnce) {
  const auto c = parse_cluster(
      cluster_text("  gpu_interconnect: nvswitch", "  gpu_interconnect: nvlink_mesh"));
  EXPECT_TRUE(c.node.nvlinks.empty());
  EXPECT_EQ(c.node.nvlinks_between(0, 1), 1);
  EXPECT_EQ(c.node.nvlinks_between(1, 1), 0);
  // Other interconnects have no NVLinks.
  EXPECT_EQ(parse_cluster(cluster_text()).node.nvlinks_between(0, 1), 0);
}

TEST(ClusterSpecErrors, NvlinksNameTheirPairAndWhatIsWrong) {
  const std::string mesh = "  gpu_interconnect: nvlink_mesh\n  nvlinks:\n";
  auto with = [&](const std::string& entries) {
    return cluster_text("  gpu_interconnect: nvswitch", mesh + entries);
  };
  const auto parsed = parse_cluster(with("    - {gpus: [1, 0], links: 3}"));
  ASSERT_EQ(parsed.node.nvlinks.size(), 1u);
  EXPECT_EQ(parsed.node.nvlinks[0].first, 0);
  EXPECT_EQ(parsed.node.nvlinks[0].links, 3);
  auto error = input_error([&] { parse_cluster(with("    - {gpus: [0, 2]}")); });
  EXPECT_EQ(error.key(), "node.nvlinks[0].gpus[1]");
  error = input_error([&] { parse_cluster(with("    - {gpus: [0, 1]}\n    - {gpus: [1, 0]}")); });
  EXPECT_EQ(error.key(), "node.nvlinks[1].gpus");
  EXPECT_TRUE(contains(error.problem(), "listed twice"));
  error = input_error([&] { parse_cluster(with("    - {gpus: [0, 1], links: 0}")); });
  EXPECT_EQ(error.key(), "node.nvlinks[0].links");
  error = input_error([&] {
    parse_cluster(cluster_text("  gpu_interconnect: nvswitch",
                               "  gpu_interconnect: nvswitch\n  nvlinks:\n    - {gpus: [0, 1]}"));
  });
  EXPECT_EQ(error.key(), "node.nvlinks");
}

// ---------------------------------------------------------------------------------------------
// Errors

TEST(ClusterSpecErrors, MissingSectionNamesIt) {
  std::string text = cluster_text();
  text = text.substr(0, text.find("filesystem:"));
  const auto error = input_error([&] { parse_cluster(text); });
  EXPECT_EQ(error.key(), "filesystem");
  EXPECT_TRUE(contains(error.problem(), "missing required key")) << error.problem();
}

TEST(ClusterSpecErrors, BadUnitNamesKeyAndLine) {
  const auto error = input_error(
      [] { parse_cluster(cluster_text("  gpu_link_bandwidth:", "  gpu_link_bandwidth: 300 GB")); });
  EXPECT_EQ(error.key(), "node.gpu_link_bandwidth");
  EXPECT_EQ(error.where().line, 11);
  EXPECT_TRUE(contains(error.problem(), "bandwidth with its unit")) << error.problem();
  EXPECT_TRUE(contains(error.problem(), "300 GB")) << error.problem();
}

TEST(ClusterSpecErrors, BareNumbersAreRefused) {
  const auto error =
      input_error([] { parse_cluster(cluster_text("  latency:", "  latency: 0.00001")); });
  EXPECT_EQ(error.key(), "filesystem.latency");
  EXPECT_TRUE(contains(error.problem(), "duration with its unit")) << error.problem();
  const auto memory =
      input_error([] { parse_cluster(cluster_text("  memory:", "  memory: 16e9")); });
  EXPECT_EQ(memory.key(), "gpu.memory");
}

TEST(ClusterSpecErrors, LatencyUnitMustBeATime) {
  const auto error =
      input_error([] { parse_cluster(cluster_text("  nic_latency:", "  nic_latency: 2 GB/s")); });
  EXPECT_EQ(error.key(), "node.nic_latency");
}

TEST(ClusterSpecErrors, BandwidthMustBePositive) {
  const auto error = input_error(
      [] { parse_cluster(cluster_text("  nic_bandwidth:", "  nic_bandwidth: 0 Gb/s")); });
  EXPECT_EQ(error.key(), "node.nic_bandwidth");
  EXPECT_TRUE(contains(error.problem(), "positive")) << error.problem();
}

TEST(ClusterSpecErrors, UnknownInterconnectSuggestsClosest) {
  const auto error = input_error(
      [] { parse_cluster(cluster_text("  gpu_interconnect:", "  gpu_interconnect: nvswitches")); });
  EXPECT_EQ(error.key(), "node.gpu_interconnect");
  EXPECT_TRUE(contains(error.problem(), "did you mean 'nvswitch'")) << error.problem();
}

TEST(ClusterSpecErrors, MisspeltKeySuggestsClosest) {
  const auto error = input_error(
      [] { parse_cluster(cluster_text("  nic_bandwidth:", "  nic_bandwith: 200 Gb/s")); });
  EXPECT_EQ(error.key(), "node.nic_bandwith");
  EXPECT_TRUE(contains(error.problem(), "did you mean 'nic_bandwidth'")) << error.problem();
}

TEST(ClusterSpecErrors, OversubscriptionBelowOneOrAboveThePortCount) {
  auto below = input_error(
      [] { parse_cluster(cluster_text("  oversubscription:", "  oversubscription: 0.5")); });
  EXPECT_EQ(below.key(), "network.oversubscription");
  auto above = input_error(
      [] { parse_cluster(cluster_text("  oversubscription:", "  oversubscription: 3")); });
  EXPECT_EQ(above.key(), "network.oversubscription");
}

TEST(ClusterSpecErrors, UnknownTopology) {
  const auto error =
      input_error([] { parse_cluster(cluster_text("  topology:", "  topology: torus")); });
  EXPECT_EQ(error.key(), "network.topology");
}

TEST(ClusterSpecErrors, EfficiencyOutsideZeroOne) {
  const auto zero = input_error([] {
    parse_cluster(cluster_text("  fp32_peak:", "  fp32_peak: 1 TFLOP/s\n  compute_efficiency: 0"));
  });
  EXPECT_EQ(zero.key(), "gpu.compute_efficiency");
  const auto above = input_error([] {
    parse_cluster(cluster_text("  fp32_peak:", "  fp32_peak: 1 TFLOP/s\n  memory_efficiency: 1.5"));
  });
  EXPECT_EQ(above.key(), "gpu.memory_efficiency");
}

TEST(ClusterSpecErrors, NvswitchNeedsGpuLinkFigures) {
  const auto error = input_error([] { parse_cluster(cluster_text("  gpu_link_bandwidth:", "")); });
  EXPECT_EQ(error.key(), "node.gpu_link_bandwidth");
}

TEST(ClusterSpecErrors, PcieGpuLinkMustMatchPcie) {
  const auto error = input_error(
      [] { parse_cluster(cluster_text("  gpu_interconnect:", "  gpu_interconnect: pcie")); });
  EXPECT_EQ(error.key(), "node.gpu_link_bandwidth");
  EXPECT_TRUE(contains(error.problem(), "pcie_bandwidth")) << error.problem();
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

TEST(ClusterSpec, NodeLocalStorageIsOptionalAndComesAsSizeAndReadRate) {
  EXPECT_EQ(parse_cluster(cluster_text()).node.local_storage_bytes, 0);
  const auto staged = parse_cluster(cluster_text(
      "  nic_latency:",
      "  nic_latency: 2 us\n  local_storage: 3.84 TB\n  local_storage_bandwidth: 6 GB/s"));
  EXPECT_DOUBLE_EQ(staged.node.local_storage_bytes, 3.84e12);
  EXPECT_DOUBLE_EQ(staged.node.local_storage_bandwidth_bytes_per_second, 6e9);
}

TEST(ClusterSpecErrors, NodeLocalStorageNeedsBothItsSizeAndItsReadRate) {
  const auto error = input_error([&] {
    (void)parse_cluster(
        cluster_text("  nic_latency:", "  nic_latency: 2 us\n  local_storage: 1 TB"));
  });
  EXPECT_EQ(error.key(), "node");
  EXPECT_TRUE(contains(error.problem(), "local_storage_bandwidth")) << error.what();
}

// Figures beyond what any machine has are typos, and near-zero rates would make the simulator's
// times infinite: each is refused with the range it must lie in.
TEST(ClusterSpecErrors, AbsurdFiguresNameTheirRange) {
  struct Case {
    std::string line_start, replacement, key, range;
  };
  for (const auto& c : std::vector<Case>{
           {"  memory:", "  memory: 1e20 GB", "gpu.memory", "from 1 MiB to 1 EiB"},
           {"  memory:", "  memory: 1 KiB", "gpu.memory", "from 1 MiB to 1 EiB"},
           {"  memory_bandwidth:", "  memory_bandwidth: 1e-300 GB/s", "gpu.memory_bandwidth",
            "from 1 kB/s to 1 EB/s"},
           {"  link_bandwidth:", "  link_bandwidth: 1e19 B/s", "network.link_bandwidth",
            "from 1 kB/s to 1 EB/s"},
           {"  fp32_peak:", "  fp32_peak: 1e9 TFLOP/s", "gpu.fp32_peak",
            "from 1 MFLOP/s to 1 EFLOP/s"},
           {"  nic_latency:", "  nic_latency: 2 s", "node.nic_latency", "from 0 s to 1 s"},
           {"  latency:", "  latency: 1e300 ns", "filesystem.latency", "from 0 s to 1 s"},
       }) {
    const auto error =
        input_error([&] { parse_cluster(cluster_text(c.line_start, c.replacement)); });
    EXPECT_EQ(error.key(), c.key) << c.replacement;
    EXPECT_TRUE(contains(error.problem(), c.range)) << error.what();
  }
}

TEST(ClusterSpecErrors, NonFiniteFiguresAreRefused) {
  for (const std::string value : {"nan GB", "inf GB", "-inf GB", "1e400 GB", ".nan"}) {
    const auto error =
        input_error([&] { parse_cluster(cluster_text("  memory:", "  memory: " + value)); });
    EXPECT_EQ(error.key(), "gpu.memory") << value;
  }
  const auto efficiency = input_error([] {
    parse_cluster(
        cluster_text("  fp32_peak:", "  fp32_peak: 1 TFLOP/s\n  compute_efficiency: .nan"));
  });
  EXPECT_EQ(efficiency.key(), "gpu.compute_efficiency");
}

TEST(ClusterSpec, RangeEndsAndZeroWhereAllowedAreAccepted) {
  const auto c = parse_cluster(cluster_text("  fp32_peak:",
                                            "  fp32_peak: 1 EFLOP/s\n  tensor_peak: 0 FLOP/s\n"
                                            "  compute_efficiency: 0.001"));
  EXPECT_DOUBLE_EQ(c.gpu.fp32_flops_per_second, 1e18);
  EXPECT_EQ(c.gpu.tensor_flops_per_second, 0);
  EXPECT_DOUBLE_EQ(c.gpu.compute_efficiency, 0.001);
  EXPECT_EQ(
      parse_cluster(cluster_text("  nic_latency:", "  nic_latency: 1 s")).node.nic_latency_seconds,
      1);
  const auto tensor = input_error([] {
    parse_cluster(cluster_text("  fp32_peak:", "  fp32_peak: 1 TFLOP/s\n  tensor_peak: 1 FLOP/s"));
  });
  EXPECT_TRUE(contains(tensor.problem(), "(or 0)")) << tensor.what();
}

TEST(ClusterSpecErrors, ADirectoryIsNotAClusterFile) {
  const auto error = input_error([] { load_cluster_file(kClusterSpecDataDir + "/clusters"); });
  EXPECT_TRUE(contains(error.problem(), "is a directory")) << error.what();
}

}  // namespace
}  // namespace tessera
