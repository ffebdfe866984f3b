#pragma once
// Input reads as one node's worth of traffic: the GPUs of a node ask for their shards, the node
// gathers their sum into host memory from where the step program says the samples are
// (input_source.hpp), then copies each shard to its GPU over PCIe. One flow per node crosses the
// network instead of one per GPU, which keeps SimGrid's bandwidth sharing cheap at thousands of
// GPUs.
//  - file_system: one file-system server reads the bytes from its disk and sends them (disk and
//    network pipelined);
//  - peer_memory: the data store's holders send them from their host memory; samples are shuffled
//    over the whole machine, so all but 1/N of them (N nodes) come from another node, played as
//    one flow from the node half the machine away;
//  - node_local_storage: the node reads them from its own disk;
//  - page_cache: the node's host memory holds them already; only the copies to the GPUs play.
// The host converts what it read to the model's dtype before the copies (io.stored_dtype).
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include "tessera/core/strategy/input_source.hpp"
#include "tessera/simulator/platform/platform.hpp"

namespace tessera::sim {

class InputPipeline {
 public:
  // Called when a GPU's shard has reached it: the GPU, when it asked, when it arrived.
  using Delivered = std::function<void(int rank, double asked_seconds, double arrived_seconds)>;

  // readers_per_node[n]: how many GPUs of node n read input; rounds: reads per GPU per step;
  // nodes_in_point: the nodes the played ones stand for (the data store's N); a GPU's copy moves
  // copied_bytes_per_read_byte times the bytes it asked to be read.
  InputPipeline(const SimPlatform& platform, std::vector<int> readers_per_node, int rounds,
                InputSource source, std::int64_t nodes_in_point, double copied_bytes_per_read_byte,
                Delivered delivered);

  void spawn();
  // Called by a GPU's actor: asks for `bytes` and returns the transfer that delivers them (null
  // when the platform cannot play reads from this source: the note of the result says so).
  simgrid::s4u::CommPtr request(int rank, double bytes);
  bool can_play() const;

 private:
  struct Node {
    int readers = 0;
    std::deque<std::pair<int, double>> pending;  // (rank, bytes) of this round
    std::vector<double> asked_seconds;           // by position in `pending`
    simgrid::s4u::SemaphorePtr requests = simgrid::s4u::Semaphore::create(0);
    simgrid::s4u::SemaphorePtr fetch = simgrid::s4u::Semaphore::create(0);
    double fetch_bytes = 0;  // what crosses the network this round
  };

  void play_node(int node);
  void play_file_system_side(int node);
  void play_peer_side(int node);
  void gather(int node_index, Node& node, double total_bytes);
  double remote_fraction() const;

  const SimPlatform& platform_;
  std::vector<std::unique_ptr<Node>> nodes_;
  int rounds_;
  double copied_bytes_per_read_byte_;
  InputSource source_;
  std::int64_t nodes_in_point_;
  Delivered delivered_;
};

}  // namespace tessera::sim
