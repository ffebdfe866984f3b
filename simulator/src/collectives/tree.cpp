// Tree all-reduce (NCCL's tree algorithm), over the members grouped by node (group_by_node):
//  - inside a node the members form a chain (node_tree): reduce up the chain to the node's first
//    member (its leader), broadcast back down;
//  - the leaders form NCCL's double binary tree over the nodes: two trees, each reducing and
//    broadcasting half of the data; a node interior in one tree is a leaf in the other, so a leader
//    sends and receives about 2S over the network in all, like the ring, over 2*ceil(log2 n)
//    inter-node hops instead of 2(n-1).
// Each of the two trees spans all members (chain below every leader) and carries S/2, so a chain
// edge carries S each way. Reduce and broadcast are pipelined: both run at once, chunk by chunk.
// Nodes may hold different counts: each node has its own chain, a node of one member is its leader
// alone, and the pipeline's latency counts the longest chain. With one node the tree is the chain;
// with one member per node it is the flat double binary tree.
//  - aggregated: one flow of S per chain edge and direction (both trees' halves), one flow of S/2
//    per inter-node tree edge, direction and tree, all at once (perfect pipelining); then the
//    members leave together (collective_max) and sleep the rest of the pipeline's latency,
//    L - a_max, where L = 2h * a_intra + 2d * a_inter (h: the longest chain's hops, d: the node
//    trees' depth, a_intra / a_inter: the largest chain / inter-node edge latency, a_max the larger
//    of the two; the flows paid one latency each). The message level pays a little more for
//    filling its pipeline;
//  - message: per tree, reduce up then broadcast down, pipelined in k chunks (tree_chunk_count)
//    with at most kWindow chunks in flight per edge and direction (NCCL_STEPS slots); the root
//    broadcasts a chunk as soon as it is reduced. The first kWindow - 1 chunks ramp up in size so
//    that a window's flows do not start, and pay their latency, all at once: flows started
//    together stay in lockstep, and the link would idle for one latency per window.
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <map>
#include <vector>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include "tessera/simulator/collectives.hpp"

namespace tessera::sim {
namespace {

namespace s4u = simgrid::s4u;

constexpr std::size_t kWindow = 8;
// Chunk size (tree_chunk_count): small enough that filling and draining the pipeline (2(h + d) - 1
// chunks in sequence) costs about kFillShare of the transfer, but large enough that the flows in
// flight through a member's port (kWindow per stream, L streams) cover kLatencyCover times the
// bandwidth-delay product, so that per-chunk latencies hide behind other chunks. The port taken is
// the one with the least bandwidth per stream, B / L (chain and node-tree edges on separate ports),
// with the largest edge latency.
// SimGrid shares a link among a window's chunk flows, so a chunk arrives a few chunk times after it
// left, and each hop lags that much behind the previous one. Where other streams fill the link
// meanwhile (the flat tree, whose two trees cross every edge in opposite directions, or the NIC
// of a leader) this costs little; a chain alone (one node: both trees rooted at its first member,
// up links carrying only reductions and down links only broadcasts) pays it on every hop.
constexpr double kFillShare = 0.01;
constexpr double kLatencyCover = 2;
constexpr int kMaxChunks = 4096;  // message granularity is for small cases

// ncclGetBtree: binary tree over [0, size) rooted at 0, odd ranks leaves.
TreeLinks binary_tree(int size, int rank) {
  TreeLinks links;
  int bit = 1;
  while (bit < size && (bit & rank) == 0) bit <<= 1;
  if (rank == 0) {
    if (size > 1) links.children.push_back(bit >> 1);
    return links;
  }
  int up = (rank ^ bit) | (bit << 1);
  if (up >= size) up = rank ^ bit;
  links.parent = up;
  int low_bit = bit >> 1;
  if (low_bit > 0) links.children.push_back(rank - low_bit);
  while (low_bit > 0 && rank + low_bit >= size) low_bit >>= 1;
  if (low_bit > 0) links.children.push_back(rank + low_bit);
  return links;
}

int relabel(int rank, int size, bool mirror) {
  if (rank < 0) return rank;
  return mirror ? size - 1 - rank : (rank + 1) % size;
}

// Channels of the tree's four streams, apart from the caller's (>= 0) and from one another.
int tree_channel(int channel, int tree, bool broadcast) {
  return -(8 * channel + 2 * tree + (broadcast ? 1 : 0) + 1);
}

void send_windowed(std::deque<s4u::CommPtr>& in_flight, s4u::CommPtr comm) {
  if (in_flight.size() >= kWindow) {
    in_flight.front()->wait();
    in_flight.pop_front();
  }
  in_flight.push_back(std::move(comm));
}

void drain(std::deque<s4u::CommPtr>& in_flight) {
  for (const auto& comm : in_flight) comm->wait();
  in_flight.clear();
}

// One member's part in one tree.
struct TreeStream {
  const Fabric& fabric;
  const std::vector<int>& members;
  int me;  // fabric rank
  const TreeLinks& links;
  int chunks;
  double chunk_bytes;  // mean
  int tree;
  int channel;

  // The first kWindow - 1 chunks ramp up (c/W, 2c/W, ...); the others share the rest equally.
  double size_of(int chunk) const {
    const int ramp = chunks > static_cast<int>(kWindow) ? static_cast<int>(kWindow) - 1 : 0;
    const double step = chunk_bytes / (ramp + 1);
    if (chunk < ramp) return step * (chunk + 1);
    return (chunk_bytes * chunks - step * ramp * (ramp + 1) / 2) / (chunks - ramp);
  }
  int peer(int index) const { return members[static_cast<std::size_t>(index)]; }
};

// Receives each chunk from every child, then passes it to the parent (at the root: to the
// broadcast).
void reduce_up(const TreeStream& stream, const s4u::SemaphorePtr& reduced) {
  const int channel = tree_channel(stream.channel, stream.tree, false);
  std::vector<std::vector<s4u::CommPtr>> incoming;
  for (int child : stream.links.children) {
    auto& posted = incoming.emplace_back();
    for (int chunk = 0; chunk < stream.chunks; ++chunk) {
      posted.push_back(stream.fabric.recv_async(stream.me, stream.peer(child), channel));
    }
  }
  std::deque<s4u::CommPtr> in_flight;
  for (int chunk = 0; chunk < stream.chunks; ++chunk) {
    for (auto& posted : incoming) posted[static_cast<std::size_t>(chunk)]->wait();
    if (stream.links.parent >= 0) {
      send_windowed(in_flight, stream.fabric.send_async(stream.me, stream.peer(stream.links.parent),
                                                        stream.size_of(chunk), channel));
    } else {
      reduced->release();
    }
  }
  drain(in_flight);
}

// Receives each reduced chunk from the parent (at the root: from the reduction), then sends it to
// every child.
void broadcast_down(const TreeStream& stream, const s4u::SemaphorePtr& reduced) {
  const int channel = tree_channel(stream.channel, stream.tree, true);
  std::vector<s4u::CommPtr> incoming;
  if (stream.links.parent >= 0) {
    for (int chunk = 0; chunk < stream.chunks; ++chunk) {
      incoming.push_back(
          stream.fabric.recv_async(stream.me, stream.peer(stream.links.parent), channel));
    }
  }
  std::vector<std::deque<s4u::CommPtr>> in_flight(stream.links.children.size());
  for (int chunk = 0; chunk < stream.chunks; ++chunk) {
    if (stream.links.parent >= 0) {
      incoming[static_cast<std::size_t>(chunk)]->wait();
    } else {
      reduced->acquire();
    }
    for (std::size_t i = 0; i < stream.links.children.size(); ++i) {
      send_windowed(in_flight[i],
                    stream.fabric.send_async(stream.me, stream.peer(stream.links.children[i]),
                                             stream.size_of(chunk), channel));
    }
  }
  for (auto& pending : in_flight) drain(pending);
}

// The member's node and place in it.
struct Place {
  std::size_t node = 0;
  std::size_t local = 0;
};

// Hops of the longest chain (most members on a node, minus one).
int chain_hops(const NodeGroups& groups) {
  std::size_t most = 1;
  for (const auto& node : groups.nodes) most = std::max(most, node.size());
  return static_cast<int>(most) - 1;
}

struct TreeLayout {
  NodeGroups groups;
  std::vector<Place> places;  // per member index
  int chain_hops = 0;
  int tree_depth = 0;  // of the node trees
};

// The members' grouping, computed once per (gpus_per_node, members): every member of every call
// needs it, and grouping is O(p log p). Process-wide, like collective_max's registry (one
// simulation per process, actors on one thread); it depends on nothing else.
const TreeLayout& tree_layout(const CollectiveContext& context, const std::vector<int>& members) {
  static std::map<int, std::map<std::vector<int>, TreeLayout>> cache;
  auto& layouts = cache[std::max(context.gpus_per_node, 1)];
  if (auto it = layouts.find(members); it != layouts.end()) return it->second;
  TreeLayout layout;
  layout.groups = group_by_node(context, members);
  layout.places.resize(members.size());
  for (std::size_t node = 0; node < layout.groups.nodes.size(); ++node) {
    const auto& indices = layout.groups.nodes[node];
    for (std::size_t local = 0; local < indices.size(); ++local) {
      layout.places[indices[local]] = {node, local};
    }
  }
  layout.chain_hops = chain_hops(layout.groups);
  layout.tree_depth = double_binary_tree_depth(static_cast<int>(layout.groups.nodes.size()));
  return layouts.emplace(members, std::move(layout)).first->second;
}

// Message granularity: four worker actors on the member's host (reduce and broadcast of each
// tree), joined before returning.
void tree_message(const CollectiveContext& context, const std::vector<int>& members,
                  std::size_t my_index, double bytes) {
  const TreeLayout& layout = tree_layout(context, members);
  const Place place = layout.places[my_index];
  const auto trees = node_tree(layout.groups, place.node, place.local);
  const int chunks = tree_chunk_count(context, members, bytes);
  const double chunk_bytes = bytes / 2 / chunks;
  const int me = members[my_index];
  std::vector<TreeStream> streams;
  streams.reserve(2);  // the workers hold references
  for (int tree = 0; tree < 2; ++tree) {
    streams.push_back(TreeStream{context.fabric, members, me, trees[static_cast<std::size_t>(tree)],
                                 chunks, chunk_bytes, tree, context.channel});
  }
  std::vector<s4u::ActorPtr> workers;
  for (const TreeStream& stream : streams) {
    auto reduced = s4u::Semaphore::create(0);
    workers.push_back(s4u::Actor::create("tree-reduce", context.fabric.host(me),
                                         [&stream, reduced] { reduce_up(stream, reduced); }));
    workers.push_back(s4u::Actor::create("tree-broadcast", context.fabric.host(me),
                                         [&stream, reduced] { broadcast_down(stream, reduced); }));
  }
  for (const auto& worker : workers) worker->join();
}

void tree_aggregated(const CollectiveContext& context, const std::vector<int>& members,
                     std::size_t my_index, double bytes) {
  const TreeLayout& layout = tree_layout(context, members);
  const NodeGroups& groups = layout.groups;
  const Place place = layout.places[my_index];
  const auto& node = groups.nodes[place.node];
  const Fabric& fabric = context.fabric;
  const int me = members[my_index];
  std::vector<s4u::CommPtr> comms;
  // Chain: both trees' halves in one flow of S each way per edge (tree 0's channels: the chain's
  // pairs are intra-node, the inter-node trees' inter-node, so their mailboxes never meet).
  double intra_latency = 0;
  const int chain_up = tree_channel(context.channel, 0, false);
  const int chain_down = tree_channel(context.channel, 0, true);
  if (place.local > 0) {
    const int parent = members[node[place.local - 1]];
    comms.push_back(fabric.send_async(me, parent, bytes, chain_up));
    comms.push_back(fabric.recv_async(me, parent, chain_down));
    intra_latency = std::max(intra_latency, fabric.route_latency_seconds(me, parent));
  }
  if (place.local + 1 < node.size()) {
    const int child = members[node[place.local + 1]];
    comms.push_back(fabric.recv_async(me, child, chain_up));
    comms.push_back(fabric.send_async(me, child, bytes, chain_down));
    intra_latency = std::max(intra_latency, fabric.route_latency_seconds(me, child));
  }
  // Node trees, between leaders: one flow of S/2 per edge, direction and tree.
  const int nodes = static_cast<int>(groups.nodes.size());
  double inter_latency = 0;
  if (place.local == 0 && nodes > 1) {
    const auto trees = double_binary_tree(nodes, static_cast<int>(place.node));
    const auto leader = [&](int other) {
      return members[groups.nodes[static_cast<std::size_t>(other)].front()];
    };
    const double half = bytes / 2;
    for (int tree = 0; tree < 2; ++tree) {
      const int up = tree_channel(context.channel, tree, false);
      const int down = tree_channel(context.channel, tree, true);
      const TreeLinks& links = trees[static_cast<std::size_t>(tree)];
      if (links.parent >= 0) {
        const int parent = leader(links.parent);
        comms.push_back(fabric.send_async(me, parent, half, up));
        comms.push_back(fabric.recv_async(me, parent, down));
        inter_latency = std::max(inter_latency, fabric.route_latency_seconds(me, parent));
      }
      for (int other : links.children) {
        const int child = leader(other);
        comms.push_back(fabric.recv_async(me, child, up));
        comms.push_back(fabric.send_async(me, child, half, down));
        inter_latency = std::max(inter_latency, fabric.route_latency_seconds(me, child));
      }
    }
  }
  s4u::Comm::wait_all(comms);
  intra_latency = collective_max(context, members, my_index, intra_latency);
  inter_latency = collective_max(context, members, my_index, inter_latency);
  const double pipeline =
      2 * layout.chain_hops * intra_latency + 2 * layout.tree_depth * inter_latency;
  const double rest = pipeline - std::max(intra_latency, inter_latency);
  if (rest > 0) s4u::this_actor::sleep_for(rest);
}

}  // namespace

std::array<TreeLinks, 2> double_binary_tree(int size, int index) {
  std::array<TreeLinks, 2> trees;
  trees[0] = binary_tree(size, index);
  // Tree 1 (ncclGetDtree): the mirror image when size is even, a shift by one when it is odd.
  const bool mirror = size % 2 == 0;
  const TreeLinks other = binary_tree(size, mirror ? size - 1 - index : (index - 1 + size) % size);
  trees[1].parent = relabel(other.parent, size, mirror);
  for (int child : other.children) trees[1].children.push_back(relabel(child, size, mirror));
  return trees;
}

int double_binary_tree_depth(int size) {
  int depth = 0;
  while ((1 << depth) < size) ++depth;
  return depth;
}

std::array<TreeLinks, 2> node_tree(const NodeGroups& groups, std::size_t node, std::size_t local) {
  std::array<TreeLinks, 2> trees;
  const auto& mine = groups.nodes.at(node);
  if (local > 0) {
    for (TreeLinks& links : trees) links.parent = static_cast<int>(mine.at(local - 1));
  } else {
    const int nodes = static_cast<int>(groups.nodes.size());
    const auto leader = [&](int other) {
      return static_cast<int>(groups.nodes[static_cast<std::size_t>(other)].front());
    };
    const auto inter = double_binary_tree(nodes, static_cast<int>(node));
    for (std::size_t tree = 0; tree < 2; ++tree) {
      if (inter[tree].parent >= 0) trees[tree].parent = leader(inter[tree].parent);
      for (int child : inter[tree].children) trees[tree].children.push_back(leader(child));
    }
  }
  if (local + 1 < mine.size()) {
    for (TreeLinks& links : trees) links.children.push_back(static_cast<int>(mine[local + 1]));
  }
  return trees;
}

int tree_chunk_count(const CollectiveContext& context, const std::vector<int>& members,
                     double bytes) {
  const int size = static_cast<int>(members.size());
  if (size < 2 || bytes <= 0) return 1;
  const TreeLayout& layout = tree_layout(context, members);
  const NodeGroups& groups = layout.groups;
  const Fabric& fabric = context.fabric;
  double latency = 0;
  // Slowest stream: the least bandwidth per stream (B / L) at any member's port, L counting the
  // port's edges in both trees; chain and node-tree edges use separate ports (NVLink and NIC).
  double stream_rate = std::numeric_limits<double>::infinity();
  for (std::size_t node = 0; node < groups.nodes.size(); ++node) {
    for (std::size_t local = 0; local < groups.nodes[node].size(); ++local) {
      const int me = members[groups.nodes[node][local]];
      const auto trees = node_tree(groups, node, local);
      for (bool chain : {true, false}) {
        int streams = 0;
        double bandwidth = std::numeric_limits<double>::infinity();
        for (const TreeLinks& links : trees) {
          std::vector<int> neighbours = links.children;
          if (links.parent >= 0) neighbours.push_back(links.parent);
          for (int neighbour : neighbours) {
            const auto& place = layout.places[static_cast<std::size_t>(neighbour)];
            if ((place.node == node) != chain) continue;
            const int peer = members[static_cast<std::size_t>(neighbour)];
            ++streams;
            latency = std::max(latency, fabric.route_latency_seconds(me, peer));
            bandwidth = std::min({bandwidth, fabric.route_bandwidth_bytes_per_second(me, peer),
                                  fabric.route_bandwidth_bytes_per_second(peer, me)});
          }
        }
        if (streams > 0) stream_rate = std::min(stream_rate, bandwidth / streams);
      }
    }
  }
  const int hops = 2 * (layout.chain_hops + layout.tree_depth);
  const double fill_chunk = kFillShare * bytes / 2 / std::max(hops - 1, 1);
  const double latency_chunk = kLatencyCover * stream_rate * latency / static_cast<double>(kWindow);
  const double chunks = std::ceil(bytes / 2 / std::max(fill_chunk, latency_chunk));
  return static_cast<int>(std::clamp(chunks, 1.0, static_cast<double>(kMaxChunks)));
}

void tree_allreduce(const CollectiveContext& context, const std::vector<int>& members,
                    std::size_t my_index, double bytes) {
  if (members.size() < 2) return;
  if (context.granularity == Granularity::message) {
    tree_message(context, members, my_index, bytes);
  } else {
    tree_aggregated(context, members, my_index, bytes);
  }
}

}  // namespace tessera::sim
