#pragma once
// Input reads as one node's worth of traffic: the GPUs of a node ask for their shards, the node
// gathers their sum into host memory from where the step program says the samples are
// (input_source.hpp), then copies each shard to its GPU over PCIe. One flow per node and source
// crosses the network instead of one per GPU and sample, which keeps SimGrid's bandwidth sharing
// cheap at thousands of GPUs.
//  - file_system: one file-system server reads the bytes from its disk and sends them (disk and
//    network pipelined);
//  - peer_memory: the data store's holders send them from their host memory, each sample's shard
//    from the node the step's draw says holds it (sample_holders.hpp), one flow per holder; a
//    node's own samples cross no network;
//  - node_local_storage: the node reads them from its own disk;
//  - page_cache: the node's host memory holds them already; only the copies to the GPUs play.
// The host converts what it read to the model's dtype before the copies (io.stored_dtype).
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include "tessera/core/strategy/input_source.hpp"
#include "tessera/core/strategy/rank_numbering.hpp"
#include "tessera/simulator/platform/platform.hpp"

namespace tessera::sim {

class InputPipeline {
 public:
  // Called when a GPU's shard has reached it: the GPU, when it asked, when it arrived.
  using Delivered = std::function<void(int rank, double asked_seconds, double arrived_seconds)>;

  // readers_per_node[n]: how many GPUs of node n read input; rounds: reads per GPU per step;
  // layout: the played GPUs' ranks (each reads shards of its data-parallel replica's samples);
  // store_draw: the data store's draw of the samples' holders; a GPU's copy moves
  // copied_bytes_per_read_byte times the bytes it asked to be read.
  InputPipeline(const SimPlatform& platform, const RankNumbering& layout,
                std::vector<int> readers_per_node, int rounds, InputSource source,
                std::uint64_t store_draw, double copied_bytes_per_read_byte, Delivered delivered);

  void spawn();
  // Called by a GPU's actor: asks for `bytes`, its shards of `samples` samples, and returns the
  // transfer that delivers them (null when the platform cannot play reads from this source: the
  // note of the result says so).
  simgrid::s4u::CommPtr request(int rank, double bytes, std::int64_t samples);
  bool can_play() const;

 private:
  struct Request {
    int rank = 0;
    double bytes = 0;
    std::int64_t samples = 1;
    double asked_seconds = 0;
  };
  struct Node {
    int readers = 0;
    std::vector<Request> pending;  // of this round
    simgrid::s4u::SemaphorePtr requests = simgrid::s4u::Semaphore::create(0);
    simgrid::s4u::SemaphorePtr fetch = simgrid::s4u::Semaphore::create(0);
    double fetch_bytes = 0;  // what the file system sends this round
  };

  void play_node(int node);
  void play_file_system_side(int node);
  void gather(int node_index, Node& node, int round);
  void fetch_from_holders(int node_index, const Node& node, int round);

  const SimPlatform& platform_;
  const RankNumbering& layout_;
  std::vector<std::unique_ptr<Node>> nodes_;
  int rounds_;
  double copied_bytes_per_read_byte_;
  InputSource source_;
  std::uint64_t store_draw_;
  Delivered delivered_;
};

}  // namespace tessera::sim
