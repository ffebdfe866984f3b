#include "input_pipeline.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Mailbox.hpp>

namespace tessera::sim {
namespace {

int kNoPayload = 0;
int* received_payload = nullptr;

simgrid::s4u::Mailbox* gpu_input(int rank) {
  return simgrid::s4u::Mailbox::by_name("input>" + std::to_string(rank));
}

simgrid::s4u::Mailbox* node_input(int node) {
  return simgrid::s4u::Mailbox::by_name("pfs>" + std::to_string(node));
}

}  // namespace

InputPipeline::InputPipeline(const SimPlatform& platform, std::vector<int> readers_per_node,
                             int rounds)
    : platform_(platform), rounds_(rounds) {
  for (int readers : readers_per_node) {
    nodes_.push_back(std::make_unique<Node>());
    nodes_.back()->readers = readers;
  }
}

void InputPipeline::spawn() {
  if (platform_.filesystem_servers.empty() || platform_.node_hosts.empty() || rounds_ == 0) return;
  for (std::size_t node = 0; node < nodes_.size(); ++node) {
    if (nodes_[node]->readers == 0) continue;
    const int n = static_cast<int>(node);
    simgrid::s4u::Actor::create("loader" + std::to_string(node), platform_.node_hosts[node],
                                [this, n] { play_node(n); });
    auto* server = platform_.filesystem_servers[node % platform_.filesystem_servers.size()];
    simgrid::s4u::Actor::create("server-side" + std::to_string(node), server,
                                [this, n] { play_server_side(n); });
  }
}

simgrid::s4u::CommPtr InputPipeline::request(int rank, double bytes) {
  if (platform_.filesystem_servers.empty() || platform_.node_hosts.empty()) return nullptr;
  auto& node = *nodes_[static_cast<std::size_t>(platform_.node_of(rank))];
  node.pending.emplace_back(rank, bytes);
  node.requests->release();
  return gpu_input(rank)->get_async<int>(&received_payload);
}

void InputPipeline::play_node(int node_index) {
  auto& node = *nodes_[static_cast<std::size_t>(node_index)];
  for (int round = 0; round < rounds_; ++round) {
    for (int i = 0; i < node.readers; ++i) node.requests->acquire();
    double total = 0;
    for (const auto& request : node.pending) total += request.second;
    node.fetch_bytes = total;
    node.fetch->release();
    node_input(node_index)->get_async<int>(&received_payload)->wait();
    // Host to device copies, one per GPU over its own PCIe link.
    std::vector<simgrid::s4u::CommPtr> copies;
    for (const auto& [rank, bytes] : node.pending) {
      copies.push_back(gpu_input(rank)->put_async(&kNoPayload, static_cast<uint64_t>(bytes)));
    }
    node.pending.clear();
    for (auto& copy : copies) copy->wait();
  }
}

void InputPipeline::play_server_side(int node_index) {
  auto& node = *nodes_[static_cast<std::size_t>(node_index)];
  const auto server = static_cast<std::size_t>(node_index) % platform_.filesystem_servers.size();
  auto* disk = platform_.filesystem_disks[server];
  for (int round = 0; round < rounds_; ++round) {
    node.fetch->acquire();
    // Disk and network pipelined: done when both have moved every byte.
    auto io = disk->read_async(static_cast<sg_size_t>(node.fetch_bytes));
    auto transfer =
        node_input(node_index)->put_async(&kNoPayload, static_cast<uint64_t>(node.fetch_bytes));
    io->wait();
    transfer->wait();
  }
}

}  // namespace tessera::sim
