#include "input_pipeline.hpp"

#include <algorithm>
#include <map>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include "no_payload.hpp"
#include "tessera/core/strategy/sample_holders.hpp"

namespace tessera::sim {
namespace {

simgrid::s4u::Mailbox* gpu_input(int rank) {
  return simgrid::s4u::Mailbox::by_name("input>" + std::to_string(rank));
}

simgrid::s4u::Mailbox* node_input(int node) {
  return simgrid::s4u::Mailbox::by_name("store>" + std::to_string(node));
}

}  // namespace

InputPipeline::InputPipeline(const SimPlatform& platform, const RankNumbering& layout,
                             std::vector<int> readers_per_node, int rounds, InputSource source,
                             std::uint64_t store_draw, double copied_bytes_per_read_byte,
                             Delivered delivered)
    : platform_(platform),
      layout_(layout),
      rounds_(rounds),
      copied_bytes_per_read_byte_(copied_bytes_per_read_byte),
      source_(source),
      store_draw_(store_draw),
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

void InputPipeline::spawn() {
  if (rounds_ == 0 || !can_play()) return;
  for (std::size_t node = 0; node < nodes_.size(); ++node) {
    if (nodes_[node]->readers == 0) continue;
    const int n = static_cast<int>(node);
    simgrid::s4u::Actor::create("loader" + std::to_string(node), platform_.node_hosts[node],
                                [this, n] { play_node(n); });
    if (source_ == InputSource::file_system) {
      auto* server = platform_.filesystem_servers[node % platform_.filesystem_servers.size()];
      simgrid::s4u::Actor::create("server-side" + std::to_string(node), server,
                                  [this, n] { play_file_system_side(n); });
    }
  }
}

simgrid::s4u::CommPtr InputPipeline::request(int rank, double bytes, std::int64_t samples) {
  if (!can_play()) return nullptr;
  auto& node = *nodes_[static_cast<std::size_t>(platform_.node_of(rank))];
  node.pending.push_back({.rank = rank,
                          .bytes = bytes,
                          .samples = std::max<std::int64_t>(samples, 1),
                          .asked_seconds = simgrid::s4u::Engine::get_clock()});
  node.requests->release();
  return gpu_input(rank)->get_async<int>(&received_payload);
}

void InputPipeline::play_node(int node_index) {
  auto& node = *nodes_[static_cast<std::size_t>(node_index)];
  for (int round = 0; round < rounds_; ++round) {
    for (int i = 0; i < node.readers; ++i) node.requests->acquire();
    gather(node_index, node, round);
    // Host to device copies, one per GPU over its own PCIe link.
    std::vector<simgrid::s4u::CommPtr> copies;
    for (const auto& request : node.pending) {
      copies.push_back(
          gpu_input(request.rank)
              ->put_async(&kNoPayload,
                          static_cast<uint64_t>(request.bytes * copied_bytes_per_read_byte_)));
    }
    std::vector<std::size_t> owner(copies.size());
    for (std::size_t i = 0; i < owner.size(); ++i) owner[i] = i;
    while (!copies.empty()) {
      const auto done = static_cast<std::size_t>(simgrid::s4u::Comm::wait_any(copies));
      const auto& request = node.pending[owner[done]];
      if (delivered_) {
        delivered_(request.rank, request.asked_seconds, simgrid::s4u::Engine::get_clock());
      }
      copies.erase(copies.begin() + static_cast<std::ptrdiff_t>(done));
      owner.erase(owner.begin() + static_cast<std::ptrdiff_t>(done));
    }
    node.pending.clear();
  }
}

// Brings this round's bytes into the node's host memory.
void InputPipeline::gather(int node_index, Node& node, int round) {
  double total_bytes = 0;
  for (const auto& request : node.pending) total_bytes += request.bytes;
  switch (source_) {
    case InputSource::node_local_storage:
      platform_.node_disks[static_cast<std::size_t>(node_index)]->read(
          static_cast<sg_size_t>(total_bytes));
      return;
    case InputSource::file_system:
      node.fetch_bytes = total_bytes;
      if (total_bytes <= 0) return;
      node.fetch->release();
      node_input(node_index)->get_async<int>(&received_payload)->wait();
      return;
    case InputSource::peer_memory:
      fetch_from_holders(node_index, node, round);
      return;
    case InputSource::none:
    case InputSource::own_memory:
    case InputSource::page_cache:
      return;
  }
}

// The holders' host memory serves at network speed: only the transfers are played, one from each
// holder of this round's samples (the shards of one sample its GPUs read together).
void InputPipeline::fetch_from_holders(int node_index, const Node& node, int round) {
  const auto nodes = static_cast<std::int64_t>(nodes_.size());
  std::map<std::int64_t, double> bytes_from;
  for (const auto& request : node.pending) {
    const std::int64_t replica = layout_.replica_of(request.rank);
    for (std::int64_t sample = 0; sample < request.samples; ++sample) {
      const auto holder =
          sample_holder(store_draw_, replica, round * request.samples + sample, nodes);
      bytes_from[holder] += request.bytes / static_cast<double>(request.samples);
    }
  }
  auto* here = platform_.node_hosts[static_cast<std::size_t>(node_index)];
  std::vector<simgrid::s4u::CommPtr> transfers;
  for (const auto& [holder, bytes] : bytes_from) {
    if (holder == node_index || bytes <= 0) continue;
    transfers.push_back(
        simgrid::s4u::Comm::sendto_async(platform_.node_hosts[static_cast<std::size_t>(holder)],
                                         here, static_cast<std::uint64_t>(bytes)));
  }
  simgrid::s4u::Comm::wait_all(transfers);
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

}  // namespace tessera::sim
