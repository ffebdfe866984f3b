#pragma once
// Collective algorithms over a Fabric, played SPMD: every member's actor calls the same function
// with its own index in `members`, and the call returns when that member's part is done.
//
// Two granularities of the same algorithm:
//  - aggregated: one flow per edge and phase carrying everything that edge carries; the per-step
//    latencies the real algorithm pays in sequence are added analytically (fast: for 2K+ GPUs);
//  - message: every step of the real algorithm as its own message (the reference, small cases).
// Both load the same links, so SimGrid's bandwidth sharing models contention either way.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "tessera/simulator/collectives/measured_allreduce.hpp"
#include "tessera/simulator/collectives/member_group.hpp"
#include "tessera/simulator/fabric.hpp"
#include "tessera/simulator/platform/node_rings.hpp"

namespace tessera::sim {

enum class AllreduceAlgorithm {
  ring,          // reduce-scatter + all-gather around one ring: 2(p-1) steps of S/p
  tree,          // NCCL's tree: a chain inside each node, a double binary tree over the nodes'
                 // first members (each tree reducing and broadcasting half of the data)
  hierarchical,  // intra-node reduce-scatter, inter-node ring per local GPU, intra-node all-gather
};
std::string to_string(AllreduceAlgorithm algorithm);

enum class Granularity { aggregated, message };

struct CollectiveContext {
  const Fabric& fabric;
  int gpus_per_node = 1;  // ranks [k*g, (k+1)*g) share node k
  int channel = 1;        // fabric channel of this collective stream
  Granularity granularity = Granularity::aggregated;
  // Symmetric simulation: `members` stand for `replicas` identical copies of themselves, node by
  // node (member ranks r, r + played, r + 2 played, ... play alike). The algorithms keep the full
  // group's step counts, shard sizes and tree depth; only the played members' flows exist.
  int replicas = 1;
  // The nodes' NVLink rings (null: none). Ring phases inside one node then run one ring per
  // channel the links allow, and rings crossing nodes visit each node's members in the order of
  // its first ring, so that hops inside a node take NVLinks (ring_channels).
  const NodeRings* node_rings = nullptr;
  // All-reduce times measured on the machine (null: none): an all-reduce whose members share one
  // node and whose group size was measured takes its measured time (measured_allreduce.hpp).
  const MeasuredAllreduce* measured_allreduce = nullptr;
};

// What of the context the collectives' per-group caches depend on besides the group: its
// nodes' size and NVLink rings.
inline std::tuple<int, std::uint64_t> layout_key(const CollectiveContext& context) {
  return {context.gpus_per_node, context.node_rings ? context.node_rings->id() : 0};
}

// All-reduce of `bytes` per member. Every member passes the same group object (member_group.hpp);
// the overloads taking rank lists look it up by its ranks (for tests and small groups).
void allreduce(const CollectiveContext& context, const MemberGroup& members, std::size_t my_index,
               double bytes, AllreduceAlgorithm algorithm);
void allreduce(const CollectiveContext& context, const std::vector<int>& members,
               std::size_t my_index, double bytes, AllreduceAlgorithm algorithm);
// Whether such an all-reduce takes its measured time (CollectiveContext::measured_allreduce).
bool plays_measured_allreduce(const CollectiveContext& context, const MemberGroup& members,
                              double bytes);

// All-gather of a tensor of `bytes` in all, each member holding 1/p of it, and reduce-scatter of
// `bytes` per member, each keeping the sum of its 1/p (rings, ring_halves.cpp).
void allgather(const CollectiveContext& context, const MemberGroup& members, std::size_t my_index,
               double bytes);
void reduce_scatter(const CollectiveContext& context, const MemberGroup& members,
                    std::size_t my_index, double bytes);

// All-to-all: each member sends `bytes_per_peer` to every other member.
void alltoall(const CollectiveContext& context, const MemberGroup& members, std::size_t my_index,
              double bytes_per_peer);
void alltoall(const CollectiveContext& context, const std::vector<int>& members,
              std::size_t my_index, double bytes_per_peer);

// Alpha-beta prediction on a contention-free platform, from the fabric's route latencies and
// bandwidths; used to pick an algorithm by size, like NCCL's tuner, and by the tests.
double predicted_allreduce_seconds(const CollectiveContext& context, const MemberGroup& members,
                                   double bytes, AllreduceAlgorithm algorithm);
double predicted_allreduce_seconds(const CollectiveContext& context,
                                   const std::vector<int>& members, double bytes,
                                   AllreduceAlgorithm algorithm);
AllreduceAlgorithm choose_allreduce(const CollectiveContext& context, const MemberGroup& members,
                                    double bytes);
AllreduceAlgorithm choose_allreduce(const CollectiveContext& context,
                                    const std::vector<int>& members, double bytes);

// Alpha-beta prediction of `alltoall` on a contention-free platform (O(p^2) route look-ups).
double predicted_alltoall_seconds(const CollectiveContext& context, const std::vector<int>& members,
                                  double bytes_per_peer);

// ---------------------------------------------------------------------------------------------
// Building blocks, shared by the algorithms and the tests.
//
// Assumptions of every collective here: all members pass the same MemberGroup, the same Fabric
// object and channel, and call the collectives of one (members, channel) pair in the same
// order; actors run on one thread (SimGrid's default, contexts/nthreads:1). Besides the caller's
// channel c >= 0, the tree uses internal channels -(8c+1) .. -(8c+4).
//
// Aggregated phases end with `collective_max` over the phase's members, so that they all leave the
// phase together when its slowest flow is done, and then sleep the phase's remaining latency
// (steps - 1) * a_max, a_max being the largest route latency of the phase's edges.

// Zero-time synchronisation of the members: returns, once the last member has arrived, the largest
// `value` passed by any of them.
double collective_max(const CollectiveContext& context, const MemberGroup& members,
                      std::size_t my_index, double value);
// The same for two values at once: the largest of each.
std::array<double, 2> collective_max(const CollectiveContext& context, const MemberGroup& members,
                                     std::size_t my_index, std::array<double, 2> values);

// `steps` steps of a ring (successor = next member, cyclically), each sending `bytes_per_step` to
// the successor and receiving as much from the predecessor: reduce-scatter and all-gather are p-1
// steps of S/p each, all-reduce 2(p-1) steps.
void ring_pass(const CollectiveContext& context, const MemberGroup& members, std::size_t my_index,
               int steps, double bytes_per_step);
// The same over several rings at once (each a MemberGroup of the same members in its ring
// order), the member being rank `me`: `bytes_per_step` is each ring's.
void ring_pass(const CollectiveContext& context, const std::vector<const MemberGroup*>& rings,
               int me, int steps, double bytes_per_step);

// The rings a ring phase over `members` runs, in the same member set, each in its ring order:
//  - all members on one node through which the node's NVLinks hold rings (and no replicas):
//    those rings, the channels over which the phase's data is split evenly;
//  - otherwise one ring, node by node as node_groups orders them (nodes by their first member,
//    each node's members along its first NVLink ring through them where there is one).
// Built once per group and context.
const std::vector<const MemberGroup*>& ring_channels(const CollectiveContext& context,
                                                     const MemberGroup& members);

void ring_allreduce(const CollectiveContext& context, const MemberGroup& members,
                    std::size_t my_index, double bytes);
void tree_allreduce(const CollectiveContext& context, const MemberGroup& members,
                    std::size_t my_index, double bytes);
void hierarchical_allreduce(const CollectiveContext& context, const MemberGroup& members,
                            std::size_t my_index, double bytes);

// One member's place in one binary tree, as indices into `members` (-1: none).
struct TreeLinks {
  int parent = -1;
  std::vector<int> children;
};
// NCCL's double binary tree over `size` members (ncclGetDtree): tree 0 is an in-order binary tree
// rooted at 0 whose odd indices are leaves; tree 1 mirrors it (size even) or shifts it by one (size
// odd), so that every member is a leaf in at least one tree (member 0 excepted when size is odd).
std::array<TreeLinks, 2> double_binary_tree(int size, int index);
// Hops from the root to the deepest leaf of either tree: ceil(log2 size).
int double_binary_tree_depth(int size);
// Message granularity of the tree: chunks per tree for an all-reduce of `bytes` (each tree carries
// bytes/2), from the trees' slowest edge. See tree.cpp.
int tree_chunk_count(const CollectiveContext& context, const MemberGroup& members, double bytes);

// Members grouped by node (fabric rank / gpus_per_node), each node's members in member order, or
// along the node's first NVLink ring through them where the context has node rings.
struct NodeGroups {
  std::vector<std::vector<std::size_t>> nodes;  // indices into `members`
  // More than one node and the same number of members on each: hierarchical applies.
  bool hierarchical() const;
};
NodeGroups group_by_node(const CollectiveContext& context, const std::vector<int>& members);
// The same, computed once per (group, layout_key) and kept for the process.
const NodeGroups& node_groups(const CollectiveContext& context, const MemberGroup& members);

// The tree all-reduce's two trees (NCCL's tree algorithm), for member `local` of node `node` of
// `groups`, as indices into `members`. Inside a node the members form a chain in node_groups' order
// (parent: the previous member, child: the next one), the same in both trees; the nodes' first
// members (leaders) form double_binary_tree over the nodes, a leader's children being the leaders
// of its child nodes and its node's second member. Nodes may hold different counts (each its own
// chain; a node of one member is its leader alone); one node is just its chain.
std::array<TreeLinks, 2> node_tree(const NodeGroups& groups, std::size_t node, std::size_t local);

}  // namespace tessera::sim
