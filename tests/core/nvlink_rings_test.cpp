// The rings a node's NVLinks hold: as many as the links allow (the DGX-1 V100's hybrid cube mesh
// holds six, its white paper's "three interwoven rings" run both ways; the P100's four), each a
// ring of direct links, no link direction crossed by more rings than it has links.
#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

#include "tessera/core/scenario/cluster_spec.hpp"
#include "tessera/core/scenario/nvlink_rings.hpp"

namespace tessera {
namespace {

std::vector<int> all_gpus(int count) {
  std::vector<int> gpus;
  for (int gpu = 0; gpu < count; ++gpu) gpus.push_back(gpu);
  return gpus;
}

// Each ring visits `locals` once each, over direct links within their capacity.
void expect_rings_fit(const NodeSpec& node, const std::vector<int>& locals,
                      const std::vector<std::vector<int>>& rings) {
  std::map<std::pair<int, int>, int> crossings;
  for (const auto& ring : rings) {
    auto sorted = ring;
    std::sort(sorted.begin(), sorted.end());
    auto expected = locals;
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(sorted, expected);
    EXPECT_EQ(ring.front(), locals.front());
    for (std::size_t i = 0; i < ring.size(); ++i) {
      ++crossings[{ring[i], ring[(i + 1) % ring.size()]}];
    }
  }
  for (const auto& [hop, count] : crossings) {
    EXPECT_LE(count, node.nvlinks_between(hop.first, hop.second))
        << hop.first << " -> " << hop.second;
  }
}

NodeSpec preset_node(const std::string& name) {
  return load_cluster_preset(name, {}, "platform.preset").node;
}

TEST(NvlinkRings, Dgx1V100HoldsSixRingsOverItsEightGpus) {
  const auto node = preset_node("dgx1_v100");
  const auto rings = nvlink_rings(node, all_gpus(8));
  EXPECT_EQ(rings.size(), 6u);  // all 6 links of every GPU busy in each direction
  expect_rings_fit(node, all_gpus(8), rings);
}

TEST(NvlinkRings, Dgx1P100HoldsFourRings) {
  const auto node = preset_node("p100_node");
  const auto rings = nvlink_rings(node, all_gpus(8));
  EXPECT_EQ(rings.size(), 4u);
  expect_rings_fit(node, all_gpus(8), rings);
}

TEST(NvlinkRings, SubsetsUseTheLinksAmongThem) {
  const auto node = preset_node("dgx1_v100");
  // A quad is fully linked: 0-1 single, 0-2 single, 0-3 double, 1-2 double, 1-3 single, 2-3
  // double: GPUs 0 and 1 have 4 links inside it, so at most 4 rings.
  const auto quad = nvlink_rings(node, {0, 1, 2, 3});
  EXPECT_EQ(quad.size(), 4u);
  expect_rings_fit(node, {0, 1, 2, 3}, quad);
  // A doubled pair holds two rings, a single link one, an unlinked pair none.
  EXPECT_EQ(nvlink_rings(node, {0, 4}).size(), 2u);
  EXPECT_EQ(nvlink_rings(node, {0, 1}).size(), 1u);
  EXPECT_TRUE(nvlink_rings(node, {0, 5}).empty());
  // GPUs 0, 1 and 5: 1-5 and 0-1 are linked, 0-5 is not: no ring.
  EXPECT_TRUE(nvlink_rings(node, {0, 1, 5}).empty());
  // Rings start at the first GPU given, in the order given.
  const auto from_five = nvlink_rings(node, {5, 1, 4, 0});
  ASSERT_FALSE(from_five.empty());
  EXPECT_EQ(from_five.front().front(), 5);
  expect_rings_fit(node, {5, 1, 4, 0}, from_five);
}

TEST(NvlinkRings, FullMeshOfEightHoldsSevenAndOtherInterconnectsNone) {
  NodeSpec mesh;
  mesh.gpu_interconnect = GpuInterconnect::nvlink_mesh;  // no list: every pair one link
  const auto rings = nvlink_rings(mesh, all_gpus(8));
  EXPECT_EQ(rings.size(), 7u);  // every GPU's 7 links busy each way
  expect_rings_fit(mesh, all_gpus(8), rings);
  NodeSpec nvswitch;
  nvswitch.gpu_interconnect = GpuInterconnect::nvswitch;
  EXPECT_TRUE(nvlink_rings(nvswitch, all_gpus(8)).empty());
  EXPECT_TRUE(nvlink_rings(mesh, {3}).empty());
}

// The search stops after a bounded amount of work on large meshes and still finds rings.
TEST(NvlinkRings, LargeFullMeshesReturnRingsAfterBoundedWork) {
  NodeSpec mesh;
  mesh.gpu_interconnect = GpuInterconnect::nvlink_mesh;
  const auto rings = nvlink_rings(mesh, all_gpus(16));
  EXPECT_GE(rings.size(), 1u);
  expect_rings_fit(mesh, all_gpus(16), rings);
}

}  // namespace
}  // namespace tessera
