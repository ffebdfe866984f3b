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
//    of the two; the flows paid one latency each);
//  - message: the reference, step by step. Per tree, each member passes chunk c of k
//    (tree_chunk_count) to its parent once it has chunk c from all its children, and to its
//    children once it has chunk c from its parent (the root: once reduced), reduction and
//    broadcast running at once. Each edge, direction and tree is a stream (EdgeStream) with one
//    chunk transferring at a time, so that a link direction carries as many flows as in the
//    aggregated model and competing traffic takes the same share of it; a chunk's latency overlaps
//    the previous chunk's transfer, as on a real link (and as NCCL's slots allow), instead of
//    idling the link. It pays what the aggregated model leaves out, filling and draining the
//    pipeline: about kFillShare of the transfer where chunks can be small enough. Measured against
//    the aggregated time on 2 to 32 GPUs (flat, nodes of 2 and 4, uneven, one node): within 0.5%
//    at 100 MB, with or without competing traffic, and within 1% at 10 MB over several nodes. For
//    small all-reduces chunks stay longer than kLatencyCover latencies, and filling costs more
//    (1 MB: up to 7.4% over several nodes, 18% and 26% on one node of 4 and of 2 GPUs).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <deque>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include "collectives/edge_stream.hpp"
#include "tessera/simulator/collectives/collectives.hpp"

namespace tessera::sim {
namespace {

namespace s4u = simgrid::s4u;

// Chunks per tree (tree_chunk_count): enough that filling and draining the pipeline costs about
// kFillShare of the transfer, but no chunk shorter on the slowest stream than kLatencyCover route
// latencies (an edge has at most one chunk paying its latency, see EdgeStream).
constexpr double kFillShare = 0.005;
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

// One member's part in one tree.
struct TreeStream {
  const Fabric& fabric;
  const MemberGroup& members;
  int me;  // fabric rank
  const TreeLinks& links;
  int chunks;
  double bytes;  // the tree's half of the all-reduce
  int tree;
  int channel;

  // Chunk sizes in whole bytes (SimGrid's), adding up to `bytes`.
  double size_of(int chunk) const {
    const auto boundary = [&](int index) { return std::floor(bytes * index / chunks); };
    return boundary(chunk + 1) - boundary(chunk);
  }
  int peer(int index) const { return members[static_cast<std::size_t>(index)]; }
  // Posts the receives of all the chunks from `from` (an index), in the reduction or broadcast.
  std::vector<s4u::CommPtr> receive_all(int from, bool broadcast) const {
    std::vector<s4u::CommPtr> posted;
    for (int chunk = 0; chunk < chunks; ++chunk) {
      posted.push_back(fabric.recv_async(me, peer(from), tree_channel(channel, tree, broadcast)));
    }
    return posted;
  }
};

// Waits for chunk `chunk` of `incoming`.
void arrive(std::vector<s4u::CommPtr>& incoming, int chunk) {
  auto& comm = incoming[static_cast<std::size_t>(chunk)];
  comm->wait();
  comm = nullptr;
}

// Passes each chunk to the parent (`up`; at the root: to the broadcast, through `reduced`) once it
// has arrived from every child.
void reduce_up(const TreeStream& stream, std::vector<std::vector<s4u::CommPtr>>& from_children,
               EdgeStream* up, const s4u::SemaphorePtr& reduced) {
  for (int chunk = 0; chunk < stream.chunks; ++chunk) {
    for (auto& incoming : from_children) arrive(incoming, chunk);
    if (up) {
      up->send(stream.size_of(chunk));
    } else {
      reduced->release();
    }
  }
  if (up) up->drain();
}

// Hands each reduced chunk to the children's senders once it has arrived from the parent (at the
// root: once reduced).
void broadcast_receive(const TreeStream& stream, std::vector<s4u::CommPtr>& from_parent,
                       const std::vector<s4u::SemaphorePtr>& to_children,
                       const s4u::SemaphorePtr& reduced) {
  for (int chunk = 0; chunk < stream.chunks; ++chunk) {
    if (stream.links.parent >= 0) {
      arrive(from_parent, chunk);
    } else {
      reduced->acquire();
    }
    for (const auto& ready : to_children) ready->release();
  }
}

// Sends each reduced chunk to one child (`down`) once the member has it (`ready`).
void broadcast_send(const TreeStream& stream, EdgeStream* down, const s4u::SemaphorePtr& ready) {
  for (int chunk = 0; chunk < stream.chunks; ++chunk) {
    ready->acquire();
    down->send(stream.size_of(chunk));
  }
  down->drain();
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

// The members' grouping, computed once per (group, layout_key): every member of every call needs
// it, and grouping is O(p log p). Process-wide, like collective_max's registry (one simulation
// per process, actors on one thread); it depends on nothing else.
const TreeLayout& tree_layout(const CollectiveContext& context, const MemberGroup& members) {
  static std::map<std::pair<std::uint64_t, std::tuple<int, std::uint64_t>>, TreeLayout> layouts;
  const auto key = std::make_pair(members.id(), layout_key(context));
  if (auto it = layouts.find(key); it != layouts.end()) return it->second;
  TreeLayout layout;
  layout.groups = node_groups(context, members);
  layout.places.resize(members.size());
  for (std::size_t node = 0; node < layout.groups.nodes.size(); ++node) {
    const auto& indices = layout.groups.nodes[node];
    for (std::size_t local = 0; local < indices.size(); ++local) {
      layout.places[indices[local]] = {node, local};
    }
  }
  layout.chain_hops = chain_hops(layout.groups);
  layout.tree_depth = double_binary_tree_depth(static_cast<int>(layout.groups.nodes.size()));
  return layouts.emplace(key, std::move(layout)).first->second;
}

// Message granularity: the member posts the receives of all its chunks (before any worker runs, so
// that members starting together find one another's receives), then runs worker actors on its
// host, joined before returning: per tree, the reduction (which sends to the parent), the
// broadcast's receiver and a sender per child.
void tree_message(const CollectiveContext& context, const MemberGroup& members,
                  std::size_t my_index, double bytes) {
  const TreeLayout& layout = tree_layout(context, members);
  const Place place = layout.places[my_index];
  const auto trees = node_tree(layout.groups, place.node, place.local);
  const int chunks = tree_chunk_count(context, members, bytes);
  const int me = members[my_index];
  s4u::Host* host = context.fabric.host(me);
  std::vector<TreeStream> streams;
  streams.reserve(2);            // the workers hold references
  std::deque<EdgeStream> edges;  // and pointers
  std::vector<s4u::ActorPtr> workers;
  for (int tree = 0; tree < 2; ++tree) {
    const TreeStream& stream = streams.emplace_back(
        TreeStream{context.fabric, members, me, trees[static_cast<std::size_t>(tree)], chunks,
                   bytes / 2, tree, context.channel});
    std::vector<std::vector<s4u::CommPtr>> from_children;
    for (int child : stream.links.children) {
      from_children.push_back(stream.receive_all(child, false));
    }
    std::vector<s4u::CommPtr> from_parent;
    if (stream.links.parent >= 0) from_parent = stream.receive_all(stream.links.parent, true);

    const auto edge = [&](int peer, bool broadcast) {
      return &edges.emplace_back(context.fabric, me, stream.peer(peer),
                                 tree_channel(context.channel, tree, broadcast));
    };
    EdgeStream* up = stream.links.parent >= 0 ? edge(stream.links.parent, false) : nullptr;
    std::vector<s4u::SemaphorePtr> to_children;
    for (int child : stream.links.children) {
      EdgeStream* down = edge(child, true);
      auto ready = s4u::Semaphore::create(0);
      to_children.push_back(ready);
      workers.push_back(s4u::Actor::create(
          "tree-send", host, [&stream, down, ready] { broadcast_send(stream, down, ready); }));
    }
    auto reduced = s4u::Semaphore::create(0);
    workers.push_back(
        s4u::Actor::create("tree-reduce", host,
                           [&stream, from_children = std::move(from_children), up,
                            reduced]() mutable { reduce_up(stream, from_children, up, reduced); }));
    workers.push_back(s4u::Actor::create(
        "tree-broadcast", host,
        [&stream, from_parent = std::move(from_parent), to_children, reduced]() mutable {
          broadcast_receive(stream, from_parent, to_children, reduced);
        }));
  }
  for (const auto& worker : workers) worker->join();
}

void tree_aggregated(const CollectiveContext& context, const MemberGroup& members,
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
  // Both maxima in one rendezvous: each costs every member a blocking call.
  const auto latencies = collective_max(context, members, my_index,
                                        std::array<double, 2>{intra_latency, inter_latency});
  intra_latency = latencies[0];
  inter_latency = latencies[1];
  const int tree_depth = double_binary_tree_depth(static_cast<int>(groups.nodes.size()) *
                                                  std::max(context.replicas, 1));
  const double pipeline = 2 * layout.chain_hops * intra_latency + 2 * tree_depth * inter_latency;
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

int tree_chunk_count(const CollectiveContext& context, const MemberGroup& members, double bytes) {
  const int size = static_cast<int>(members.size());
  if (size < 2 || bytes <= 0) return 1;
  const TreeLayout& layout = tree_layout(context, members);
  const NodeGroups& groups = layout.groups;
  const Fabric& fabric = context.fabric;
  constexpr double kTreeInfinity = std::numeric_limits<double>::infinity();
  // Per class (chain, node tree): the least bandwidth per stream at any member's port (B / L, L
  // counting the port's edges in both trees; chain and node-tree edges use separate ports, NVLink
  // and NIC), and the largest edge latency of all.
  std::array<double, 2> stream_rate{kTreeInfinity, kTreeInfinity};  // chain, node tree
  double latency = 0;
  for (std::size_t node = 0; node < groups.nodes.size(); ++node) {
    for (std::size_t local = 0; local < groups.nodes[node].size(); ++local) {
      const int me = members[groups.nodes[node][local]];
      const auto trees = node_tree(groups, node, local);
      for (std::size_t tier = 0; tier < 2; ++tier) {
        int streams = 0;
        double bandwidth = kTreeInfinity;
        for (const TreeLinks& links : trees) {
          std::vector<int> neighbours = links.children;
          if (links.parent >= 0) neighbours.push_back(links.parent);
          for (int neighbour : neighbours) {
            const auto& place = layout.places[static_cast<std::size_t>(neighbour)];
            if ((place.node == node) != (tier == 0)) continue;
            const int peer = members[static_cast<std::size_t>(neighbour)];
            ++streams;
            latency = std::max(latency, fabric.route_latency_seconds(me, peer));
            bandwidth = std::min({bandwidth, fabric.route_bandwidth_bytes_per_second(me, peer),
                                  fabric.route_bandwidth_bytes_per_second(peer, me)});
          }
        }
        if (streams > 0) stream_rate[tier] = std::min(stream_rate[tier], bandwidth / streams);
      }
    }
  }
  const double slowest = std::min(stream_rate[0], stream_rate[1]);
  if (slowest == kTreeInfinity) return 1;
  // Filling and draining: a chunk crosses the 2h chain and 2d node-tree hops of the deepest path
  // (leaf, root, leaf), each taking up to a chunk time at its class's slowest stream rate, while
  // the slowest stream's chunks stream through: about F chunk times of the slowest stream beyond
  // its k, F = 2h B / B_chain + 2d B / B_tree - 1 (B the slowest rate); a bound, the two trees'
  // and the reduction's and broadcast's streams overlapping more (measured: about F / 4).
  const double fill = 2 * layout.chain_hops * slowest / stream_rate[0] +
                      2 * layout.tree_depth * slowest / stream_rate[1] - 1;
  const double for_fill = std::ceil(std::max(fill, 1.0) / kFillShare);
  const double transfer = bytes / 2 / slowest;  // the slowest stream's
  const double for_latency = std::floor(transfer / (kLatencyCover * latency));
  const double chunks = latency > 0 ? std::min(for_fill, for_latency) : for_fill;
  return static_cast<int>(std::clamp(chunks, 1.0, static_cast<double>(kMaxChunks)));
}

void tree_allreduce(const CollectiveContext& context, const MemberGroup& members,
                    std::size_t my_index, double bytes) {
  if (members.size() < 2) return;
  if (context.granularity == Granularity::message) {
    tree_message(context, members, my_index, bytes);
  } else {
    tree_aggregated(context, members, my_index, bytes);
  }
}

}  // namespace tessera::sim
