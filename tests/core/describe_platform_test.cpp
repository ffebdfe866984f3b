// `tessera describe`'s platform lines: a node's NVLink mesh, how many GPU pairs it links and how
// many rings an all-reduce inside the node runs, per node group; the failed nodes.
#include <gtest/gtest.h>

#include <string>

#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/report/describe_report.hpp"

namespace tessera {
namespace {

std::string describe_on(const std::string& preset) {
  const auto loaded = load_scenario_text(
      "name: platform-describe\nmodel: {zoo: resnet18, mini_batch: 32}\nplatform: {preset: " +
          preset + "}\n",
      "describe.yaml", ".");
  return describe_scenario(loaded, {.layers = false});
}

TEST(DescribePlatform, SaysTheNvlinkMeshAndItsRings) {
  const auto dgx1 = describe_on("dgx1_v100");
  EXPECT_NE(dgx1.find("NVLink mesh: 16 of 28 GPU pairs linked (the others over PCIe); all-reduce "
                      "inside a node: 6 rings; 25 GB/s per link"),
            std::string::npos)
      << dgx1;
  const auto mixed = describe_on("v100_p100_mixed");
  EXPECT_NE(mixed.find("v100 nodes: NVLink mesh"), std::string::npos) << mixed;
  EXPECT_NE(mixed.find("p100 nodes: NVLink mesh: 16 of 28 GPU pairs linked (the others over "
                       "PCIe); all-reduce inside a node: 4 rings; 20 GB/s per link"),
            std::string::npos)
      << mixed;
  // Lassen's GPUs are linked in pairs (3 links each): no NVLink ring through all four.
  const auto lassen = describe_on("lassen");
  EXPECT_NE(lassen.find("NVLink mesh: 2 of 6 GPU pairs linked (the others over PCIe); all-reduce "
                        "inside a node: one ring in GPU order, its unlinked hops over PCIe"),
            std::string::npos)
      << lassen;
  // ABCI's four V100s are fully linked (2 links a pair): one ring each way, as NCCL finds.
  const auto abci = describe_on("abci");
  EXPECT_NE(abci.find("NVLink mesh: 6 of 6 GPU pairs linked; all-reduce inside a node: 2 rings; "
                      "50 GB/s per link"),
            std::string::npos)
      << abci;
  EXPECT_EQ(describe_on("dgx_h100_superpod").find("NVLink mesh"), std::string::npos);
}

TEST(DescribePlatform, NamesTheFailedNodes) {
  auto loaded = load_scenario_text(
      "name: failed\nmodel: {zoo: resnet18, mini_batch: 32}\nplatform: {preset: dgx1_v100}\n",
      "describe.yaml", ".");
  loaded.cluster.failed_nodes = {2, 7};
  const auto report = describe_scenario(loaded, {.layers = false});
  EXPECT_NE(report.find("failed nodes: 2, 7 (jobs run on the 126 nodes that are up)"),
            std::string::npos)
      << report;
}

}  // namespace
}  // namespace tessera
