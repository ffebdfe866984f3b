// The trees of the tree all-reduce, built without simulating them: NCCL's double binary tree
// over the members, and its node form (a chain inside each node under a tree of node leaders).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "tessera/simulator/collectives/collectives.hpp"

namespace tessera::sim {
namespace {

TEST(DoubleBinaryTree, EachTreeSpansTheMembersWithConsistentLinks) {
  for (int size = 1; size <= 70; ++size) {
    std::vector<std::array<TreeLinks, 2>> all;
    for (int index = 0; index < size; ++index) all.push_back(double_binary_tree(size, index));
    for (int tree = 0; tree < 2; ++tree) {
      int roots = 0;
      int depth = 0;
      for (int index = 0; index < size; ++index) {
        const TreeLinks& links =
            all[static_cast<std::size_t>(index)][static_cast<std::size_t>(tree)];
        EXPECT_LE(links.children.size(), 2u);
        if (links.parent < 0) ++roots;
        for (int child : links.children) {
          ASSERT_GE(child, 0);
          ASSERT_LT(child, size);
          EXPECT_EQ(all[static_cast<std::size_t>(child)][static_cast<std::size_t>(tree)].parent,
                    index)
              << "size " << size << " tree " << tree;
        }
        // Walking up reaches the root within depth hops (no cycles).
        int hops = 0;
        for (int at = index; at >= 0 && hops <= size;
             at = all[static_cast<std::size_t>(at)][static_cast<std::size_t>(tree)].parent) {
          ++hops;
        }
        depth = std::max(depth, hops - 1);
      }
      EXPECT_EQ(roots, 1) << "size " << size << " tree " << tree;
      EXPECT_EQ(depth, double_binary_tree_depth(size)) << "size " << size << " tree " << tree;
    }
    // A leaf in at least one tree (member 0 of an odd-sized group excepted), and at most four tree
    // edges per member: about 2S sent and received in all, like the ring.
    for (int index = 0; index < size; ++index) {
      const auto& trees = all[static_cast<std::size_t>(index)];
      if (!(index == 0 && size % 2 == 1)) {
        EXPECT_TRUE(trees[0].children.empty() || trees[1].children.empty())
            << "size " << size << " member " << index;
      }
      std::size_t edges = 0;
      for (const auto& links : trees) edges += links.children.size() + (links.parent >= 0 ? 1 : 0);
      EXPECT_LE(edges, 4u) << "size " << size << " member " << index;
    }
  }
}

TEST(DoubleBinaryTree, DepthIsCeilLog2) {
  EXPECT_EQ(double_binary_tree_depth(1), 0);
  EXPECT_EQ(double_binary_tree_depth(2), 1);
  EXPECT_EQ(double_binary_tree_depth(3), 2);
  EXPECT_EQ(double_binary_tree_depth(16), 4);
  EXPECT_EQ(double_binary_tree_depth(17), 5);
  EXPECT_EQ(double_binary_tree_depth(2048), 11);
}

// NCCL's tree over nodes: a chain inside each node, the nodes' first members in a double binary
// tree; each of the two trees spans all members, with consistent links, and is no deeper than the
// longest chain plus the node trees' depth. Members listed in reverse rank order, nodes uneven.
TEST(NodeTree, ChainsUnderADoubleBinaryTreeOfLeaders) {
  const Fabric fabric({});
  for (int per_node : {1, 2, 3, 4}) {
    for (int size = 1; size <= 40; ++size) {
      const CollectiveContext context{fabric, per_node, 1, Granularity::aggregated};
      std::vector<int> members;
      for (int rank = size - 1; rank >= 0; --rank) members.push_back(rank);
      const NodeGroups groups = group_by_node(context, members);
      const int nodes = static_cast<int>(groups.nodes.size());
      ASSERT_EQ(nodes, (size + per_node - 1) / per_node);
      std::size_t most = 0;
      for (const auto& node : groups.nodes) most = std::max(most, node.size());
      std::vector<std::array<TreeLinks, 2>> all(members.size());
      for (std::size_t node = 0; node < groups.nodes.size(); ++node) {
        for (std::size_t local = 0; local < groups.nodes[node].size(); ++local) {
          all[groups.nodes[node][local]] = node_tree(groups, node, local);
        }
      }
      const std::string where =
          "size " + std::to_string(size) + " per node " + std::to_string(per_node);
      for (std::size_t tree = 0; tree < 2; ++tree) {
        int roots = 0;
        int depth = 0;
        for (int index = 0; index < size; ++index) {
          const TreeLinks& links = all[static_cast<std::size_t>(index)][tree];
          if (links.parent < 0) ++roots;
          for (int child : links.children) {
            ASSERT_GE(child, 0);
            ASSERT_LT(child, size);
            EXPECT_EQ(all[static_cast<std::size_t>(child)][tree].parent, index) << where;
          }
          // Links stay inside a node, or join two nodes' first members.
          const int node_of_index = members[static_cast<std::size_t>(index)] / per_node;
          std::vector<int> neighbours = links.children;
          if (links.parent >= 0) neighbours.push_back(links.parent);
          for (int neighbour : neighbours) {
            const int rank = members[static_cast<std::size_t>(neighbour)];
            if (rank / per_node == node_of_index) continue;
            for (int end : {index, neighbour}) {
              const int end_node = members[static_cast<std::size_t>(end)] / per_node;
              const int first = std::max(0, std::min(size - 1, end_node * per_node + per_node - 1));
              EXPECT_EQ(members[static_cast<std::size_t>(end)], first)
                  << where << ": inter-node link at a member that is not its node's first";
            }
          }
          int hops = 0;
          for (int at = index; at >= 0 && hops <= size;
               at = all[static_cast<std::size_t>(at)][tree].parent) {
            ++hops;
          }
          depth = std::max(depth, hops - 1);
        }
        EXPECT_EQ(roots, 1) << where << " tree " << tree;
        EXPECT_LE(depth, static_cast<int>(most) - 1 + double_binary_tree_depth(nodes))
            << where << " tree " << tree;
        if (size % per_node == 0) {  // even nodes: the deepest chain hangs at the deepest node
          EXPECT_EQ(depth, per_node - 1 + double_binary_tree_depth(nodes))
              << where << " tree " << tree;
        }
      }
    }
  }
}

}  // namespace
}  // namespace tessera::sim
