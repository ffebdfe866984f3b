// Double binary tree all-reduce (NCCL): two binary trees, each reducing then broadcasting half of
// the data; a member interior in one tree is a leaf in the other, so every member sends and
// receives about 2S in all, like the ring, over 2*ceil(log2 p) hops instead of 2(p-1).
//  - aggregated: one flow of S/2 per tree edge, direction and tree, all at once, then the remaining
//    2d - 1 latencies of the slowest edge (d = tree depth), all members leaving together. This is
//    perfect pipelining: the message level pays a little more for filling its pipeline;
//  - message: per tree, reduce up then broadcast down, pipelined in k chunks (tree_chunk_count)
//    with at most kWindow chunks in flight per edge and direction (NCCL_STEPS slots); the root
//    broadcasts a chunk as soon as it is reduced. The first kWindow - 1 chunks ramp up in size so
//    that a window's flows do not start, and pay their latency, all at once: flows started
//    together stay in lockstep, and the link would idle for one latency per window.
#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <vector>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include "tessera/simulator/collectives.hpp"

namespace tessera::sim {
namespace {

namespace s4u = simgrid::s4u;

constexpr std::size_t kWindow = 8;
// Chunk size (tree_chunk_count): small enough that filling and draining the pipeline (2d - 1
// chunks in sequence) costs about kFillShare of the transfer, but large enough that the flows in
// flight through a member's port (kWindow per stream, L streams) cover kLatencyCover times the
// bandwidth-delay product, so that per-chunk latencies hide behind other chunks.
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

// Message granularity: four worker actors on the member's host (reduce and broadcast of each
// tree), joined before returning.
void tree_message(const CollectiveContext& context, const std::vector<int>& members,
                  std::size_t my_index, double bytes) {
  const int size = static_cast<int>(members.size());
  const auto trees = double_binary_tree(size, static_cast<int>(my_index));
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
  const int size = static_cast<int>(members.size());
  const auto trees = double_binary_tree(size, static_cast<int>(my_index));
  const Fabric& fabric = context.fabric;
  const int me = members[my_index];
  const double half = bytes / 2;
  std::vector<s4u::CommPtr> comms;
  double latency = 0;
  for (int tree = 0; tree < 2; ++tree) {
    const int up = tree_channel(context.channel, tree, false);
    const int down = tree_channel(context.channel, tree, true);
    const TreeLinks& links = trees[static_cast<std::size_t>(tree)];
    if (links.parent >= 0) {
      const int parent = members[static_cast<std::size_t>(links.parent)];
      comms.push_back(fabric.send_async(me, parent, half, up));
      comms.push_back(fabric.recv_async(me, parent, down));
      latency = std::max(latency, fabric.route_latency_seconds(me, parent));
    }
    for (int index : links.children) {
      const int child = members[static_cast<std::size_t>(index)];
      comms.push_back(fabric.recv_async(me, child, up));
      comms.push_back(fabric.send_async(me, child, half, down));
      latency = std::max(latency, fabric.route_latency_seconds(me, child));
    }
  }
  s4u::Comm::wait_all(comms);
  latency = collective_max(context, members, my_index, latency);
  const int hops = 2 * double_binary_tree_depth(size);
  if (hops > 1) s4u::this_actor::sleep_for((hops - 1) * latency);
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

int tree_chunk_count(const CollectiveContext& context, const std::vector<int>& members,
                     double bytes) {
  const int size = static_cast<int>(members.size());
  if (size < 2 || bytes <= 0) return 1;
  double latency = 0;
  double bandwidth = std::numeric_limits<double>::infinity();
  int ports = 1;  // most tree edges at one member (L)
  for (int index = 0; index < size; ++index) {
    const int me = members[static_cast<std::size_t>(index)];
    int edges = 0;
    for (const TreeLinks& links : double_binary_tree(size, index)) {
      std::vector<int> neighbours = links.children;
      if (links.parent >= 0) neighbours.push_back(links.parent);
      for (int neighbour : neighbours) {
        const int peer = members[static_cast<std::size_t>(neighbour)];
        ++edges;
        latency = std::max(latency, context.fabric.route_latency_seconds(me, peer));
        bandwidth = std::min(bandwidth, context.fabric.route_bandwidth_bytes_per_second(me, peer));
      }
    }
    ports = std::max(ports, edges);
  }
  const double fill_chunk = kFillShare * bytes / 2 / (2 * double_binary_tree_depth(size) - 1);
  const double latency_chunk =
      kLatencyCover * bandwidth * latency / (static_cast<double>(kWindow) * ports);
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
