// Double binary tree all-reduce (NCCL): two binary trees, each reducing then broadcasting half of
// the data; a member interior in one tree is a leaf in the other, so every member sends and
// receives about 2S in all, like the ring, over 2*ceil(log2 p) hops instead of 2(p-1).
//  - aggregated: one flow of S/2 per tree edge, direction and tree, all at once, then the remaining
//    2d - 1 latencies of the slowest edge (d = tree depth), all members leaving together;
//  - message: per tree, reduce up then broadcast down, pipelined in k chunks of S/(2k)
//    (tree_chunk_count), with at most kWindow chunks in flight per edge and direction, like NCCL's
//    slots. The root starts broadcasting a chunk as soon as it is reduced.
#include <algorithm>
#include <cmath>
#include <deque>
#include <vector>
#include <cstdio>
#include <simgrid/s4u/Engine.hpp>
#include <cstdlib>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include "tessera/simulator/collectives.hpp"

namespace tessera::sim {
namespace {

namespace s4u = simgrid::s4u;

// Chunks per tree: about kChunkBytes each, at most kMaxChunks (message granularity is for small
// cases, where the pipeline's fill and drain should cost little against the 2S/B transfer).
const double kChunkBytes = getenv("CHUNK") ? atof(getenv("CHUNK")) : 128.0 * 1024;
const int kMaxChunks = getenv("MAXC") ? atoi(getenv("MAXC")) : 256;
const std::size_t kWindow = getenv("WIN") ? atoi(getenv("WIN")) : 2;

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

struct TreeStream {
  const Fabric& fabric;
  const std::vector<int>& members;
  int me;  // fabric rank
  const TreeLinks& links;
  int chunks;
  double chunk_bytes;
  double size_of(int chunk) const {
    // The first kWindow-1 chunks ramp up so that a window's flows do not all start (and pay their
    // latency) at once.
    const int ramp = getenv("RAMP") ? static_cast<int>(kWindow) - 1 : 0;
    if (chunks <= ramp) return chunk_bytes;
    const double total = chunk_bytes * chunks;
    const double ramp_total = chunk_bytes * ramp * (ramp + 1) / 2.0 / (ramp + 1);
    if (chunk < ramp) return chunk_bytes * (chunk + 1) / (ramp + 1);
    return (total - ramp_total) / (chunks - ramp);
  }
  int tree;
  int channel;
};

// Receives each chunk from every child, then passes it to the parent (or, at the root, to the
// broadcast).
void reduce_up(const TreeStream& stream, const s4u::SemaphorePtr& reduced) {
  const int channel = tree_channel(stream.channel, stream.tree, false);
  std::vector<std::vector<s4u::CommPtr>> incoming;
  for (int child : stream.links.children) {
    auto& posted = incoming.emplace_back();
    for (int chunk = 0; chunk < stream.chunks; ++chunk) {
      posted.push_back(stream.fabric.recv_async(stream.me, stream.members[child], channel));
    }
  }
  std::deque<s4u::CommPtr> in_flight;
  for (int chunk = 0; chunk < stream.chunks; ++chunk) {
    for (auto& posted : incoming) posted[chunk]->wait();
    if (stream.links.parent >= 0) {
      send_windowed(in_flight,
                    stream.fabric.send_async(stream.me, stream.members[stream.links.parent],
                                             stream.size_of(chunk), channel));
    } else {
      reduced->release();
    }
    if (getenv("DBG") && (chunk < 3 || chunk > stream.chunks - 3)) printf("%.6f me=%d tree=%d reduce chunk %d ready\n", s4u::Engine::get_clock(), stream.me, stream.tree, chunk);
  }
  drain(in_flight);
  if (getenv("DBG")) printf("%.6f me=%d tree=%d reduce done\n", s4u::Engine::get_clock(), stream.me, stream.tree);
}

// Receives each reduced chunk from the parent (or the root's reduction), then sends it to every
// child.
void broadcast_down(const TreeStream& stream, const s4u::SemaphorePtr& reduced) {
  const int channel = tree_channel(stream.channel, stream.tree, true);
  std::vector<s4u::CommPtr> incoming;
  if (stream.links.parent >= 0) {
    for (int chunk = 0; chunk < stream.chunks; ++chunk) {
      incoming.push_back(
          stream.fabric.recv_async(stream.me, stream.members[stream.links.parent], channel));
    }
  }
  std::vector<std::deque<s4u::CommPtr>> in_flight(stream.links.children.size());
  for (int chunk = 0; chunk < stream.chunks; ++chunk) {
    if (stream.links.parent >= 0) {
      incoming[chunk]->wait();
    } else {
      reduced->acquire();
    }
    for (std::size_t i = 0; i < stream.links.children.size(); ++i) {
      send_windowed(in_flight[i],
                    stream.fabric.send_async(stream.me, stream.members[stream.links.children[i]],
                                             stream.size_of(chunk), channel));
    }
  }
  for (auto& pending : in_flight) drain(pending);
  if (getenv("DBG")) printf("%.6f me=%d tree=%d bcast done\n", s4u::Engine::get_clock(), stream.me, stream.tree);
}

void tree_message(const CollectiveContext& context, const std::vector<int>& members,
                  std::size_t my_index, double bytes) {
  const int size = static_cast<int>(members.size());
  const auto trees = double_binary_tree(size, static_cast<int>(my_index));
  int chunks = tree_chunk_count(bytes);
  if (getenv("AUTO")) {
    double a = 0, B = 1e300; int L = 0;
    for (int i = 0; i < size; ++i) { int e = 0; for (const auto& l : double_binary_tree(size, i)) { std::vector<int> nb = l.children; if (l.parent >= 0) nb.push_back(l.parent); for (int j : nb) { ++e; a = std::max(a, context.fabric.route_latency_seconds(members[i], members[j])); B = std::min(B, context.fabric.route_bandwidth_bytes_per_second(members[i], members[j])); } } L = std::max(L, e); }
    const int d = double_binary_tree_depth(size);
    const double W = static_cast<double>(kWindow);
    chunks = std::max(1, static_cast<int>(std::lround(std::sqrt((2 * d - 1) * L * bytes * W / (2 * a * B)))));
    if (my_index == 0 && getenv("DBG2")) printf("k=%d model_overhead=%g\n", chunks, 2 * std::sqrt((2 * d - 1) * L * bytes * a / (2 * B * W)));
  }
  const double chunk_bytes = bytes / 2 / chunks;
  const int me = members[my_index];
  std::vector<s4u::ActorPtr> workers;
  std::vector<TreeStream> streams;
  streams.reserve(2);
  for (int tree = 0; tree < 2; ++tree) {
    streams.push_back(TreeStream{context.fabric, members, me, trees[tree], chunks, chunk_bytes,
                                 tree, context.channel});
  }
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
    const TreeLinks& links = trees[tree];
    if (links.parent >= 0) {
      const int parent = members[links.parent];
      comms.push_back(fabric.send_async(me, parent, half, up));
      comms.push_back(fabric.recv_async(me, parent, down));
      latency = std::max(latency, fabric.route_latency_seconds(me, parent));
    }
    for (int index : links.children) {
      const int child = members[index];
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

int tree_chunk_count(double bytes) {
  const double chunks = std::ceil(bytes / 2 / kChunkBytes);
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
