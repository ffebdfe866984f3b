#include "input_pipeline.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include "no_payload.hpp"

namespace tessera::sim {
namespace {

simgrid::s4u::Mailbox* gpu_input(int rank) {
  return simgrid::s4u::Mailbox::by_name("input>" + std::to_string(rank));
}

simgrid::s4u::Mailbox* node_input(int node) {
  return simgrid::s4u::Mailbox::by_name("store>" + std::to_string(node));
}

}  // namespace

InputPipeline::InputPipeline(const SimPlatform& platform, std::vector<int> readers_per_node,
                             int rounds, InputSource source, std::int64_t nodes_in_point,
                             double copied_bytes_per_read_byte, Delivered delivered)
    : platform_(platform),
      rounds_(rounds),
      copied_bytes_per_read_byte_(copied_bytes_per_read_byte),
      source_(source),
      nodes_in_point_(nodes_in_point),
      delivered_(std::move(delivered)) {
  for (int readers : readers_per_node) {
    nodes_.push_back(std::make_unique<Node>());
    nodes_.back()->readers = readers;
  }
}

bool InputPipeline::can_play() const {
  if (platform_.node_hosts.empty()) return false;
  switch (source_) {
    case InputSource::none:
    case InputSource::own_memory:  // the real backend's store: no platform resource to play
      return false;
    case InputSource::file_system:
      return !platform_.filesystem_servers.empty();
    case InputSource::peer_memory:
    case InputSource::page_cache:
      return true;
    case InputSource::node_local_storage:
      return platform_.nodes_have_disks();
  }
  return false;
}

double InputPipeline::remote_fraction() const {
  if (source_ != InputSource::peer_memory || nodes_in_point_ <= 1 || nodes_.size() <= 1) {
    return source_ == InputSource::file_system ? 1.0 : 0.0;
  }
  return static_cast<double>(nodes_in_point_ - 1) / static_cast<double>(nodes_in_point_);
}

void InputPipeline::spawn() {
  if (rounds_ == 0 || !can_play()) return;
  const bool remote = remote_fraction() > 0;
  for (std::size_t node = 0; node < nodes_.size(); ++node) {
    if (nodes_[node]->readers == 0) continue;
    const int n = static_cast<int>(node);
    simgrid::s4u::Actor::create("loader" + std::to_string(node), platform_.node_hosts[node],
                                [this, n] { play_node(n); });
    if (source_ == InputSource::file_system) {
      auto* server = platform_.filesystem_servers[node % platform_.filesystem_servers.size()];
      simgrid::s4u::Actor::create("server-side" + std::to_string(node), server,
                                  [this, n] { play_file_system_side(n); });
    } else if (source_ == InputSource::peer_memory && remote) {
      const std::size_t peer = (node + nodes_.size() / 2) % nodes_.size();
      simgrid::s4u::Actor::create("store-holder" + std::to_string(node), platform_.node_hosts[peer],
                                  [this, n] { play_peer_side(n); });
    }
  }
}

simgrid::s4u::CommPtr InputPipeline::request(int rank, double bytes) {
  if (!can_play()) return nullptr;
  auto& node = *nodes_[static_cast<std::size_t>(platform_.node_of(rank))];
  node.pending.emplace_back(rank, bytes);
  node.asked_seconds.push_back(simgrid::s4u::Engine::get_clock());
  node.requests->release();
  return gpu_input(rank)->get_async<int>(&received_payload);
}

void InputPipeline::play_node(int node_index) {
  auto& node = *nodes_[static_cast<std::size_t>(node_index)];
  for (int round = 0; round < rounds_; ++round) {
    for (int i = 0; i < node.readers; ++i) node.requests->acquire();
    double total = 0;
    for (const auto& request : node.pending) total += request.second;
    gather(node_index, node, total);
    // Host to device copies, one per GPU over its own PCIe link.
    std::vector<simgrid::s4u::CommPtr> copies;
    for (const auto& [rank, bytes] : node.pending) {
      copies.push_back(gpu_input(rank)->put_async(
          &kNoPayload, static_cast<uint64_t>(bytes * copied_bytes_per_read_byte_)));
    }
    std::vector<std::size_t> owner(copies.size());
    for (std::size_t i = 0; i < owner.size(); ++i) owner[i] = i;
    while (!copies.empty()) {
      const auto done = static_cast<std::size_t>(simgrid::s4u::Comm::wait_any(copies));
      const auto request = owner[done];
      if (delivered_) {
        delivered_(node.pending[request].first, node.asked_seconds[request],
                   simgrid::s4u::Engine::get_clock());
      }
      copies.erase(copies.begin() + static_cast<std::ptrdiff_t>(done));
      owner.erase(owner.begin() + static_cast<std::ptrdiff_t>(done));
    }
    node.pending.clear();
    node.asked_seconds.clear();
  }
}

// Brings this round's bytes into the node's host memory.
void InputPipeline::gather(int node_index, Node& node, double total_bytes) {
  if (source_ == InputSource::node_local_storage) {
    platform_.node_disks[static_cast<std::size_t>(node_index)]->read(
        static_cast<sg_size_t>(total_bytes));
    return;
  }
  node.fetch_bytes = total_bytes * remote_fraction();
  if (node.fetch_bytes <= 0) return;
  node.fetch->release();
  node_input(node_index)->get_async<int>(&received_payload)->wait();
}

void InputPipeline::play_file_system_side(int node_index) {
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

// The holders' host memory serves at network speed: only the transfer is played.
void InputPipeline::play_peer_side(int node_index) {
  auto& node = *nodes_[static_cast<std::size_t>(node_index)];
  for (int round = 0; round < rounds_; ++round) {
    node.fetch->acquire();
    node_input(node_index)->put(&kNoPayload, static_cast<uint64_t>(node.fetch_bytes));
  }
}

}  // namespace tessera::sim
