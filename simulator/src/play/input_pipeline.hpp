#pragma once
// Input reads as one node's worth of traffic: the GPUs of a node ask for their shards, the node
// fetches their sum from one file-system server (disk and network pipelined) into host memory,
// then copies each shard to its GPU over PCIe. One flow per node crosses the network instead of
// one per GPU, which keeps SimGrid's bandwidth sharing cheap at thousands of GPUs.
#include <deque>
#include <memory>
#include <vector>

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include "tessera/simulator/platform.hpp"

namespace tessera::sim {

class InputPipeline {
 public:
  // readers_per_node[n]: how many GPUs of node n read input; rounds: reads per GPU per step.
  InputPipeline(const SimPlatform& platform, std::vector<int> readers_per_node, int rounds);

  void spawn();
  // Called by a GPU's actor: asks for `bytes` and returns the transfer that delivers them.
  simgrid::s4u::CommPtr request(int rank, double bytes);

 private:
  struct Node {
    int readers = 0;
    std::deque<std::pair<int, double>> pending;  // (rank, bytes) of this round
    simgrid::s4u::SemaphorePtr requests = simgrid::s4u::Semaphore::create(0);
    simgrid::s4u::SemaphorePtr fetch = simgrid::s4u::Semaphore::create(0);
    double fetch_bytes = 0;
  };

  void play_node(int node);
  void play_server_side(int node);

  const SimPlatform& platform_;
  std::vector<std::unique_ptr<Node>> nodes_;
  int rounds_;
};

}  // namespace tessera::sim
