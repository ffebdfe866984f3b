#include "staging.hpp"

#include <string>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Disk.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Io.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include "no_payload.hpp"

namespace tessera::sim {
namespace {

simgrid::s4u::Mailbox* staging_box(int node) {
  return simgrid::s4u::Mailbox::by_name("staging>" + std::to_string(node));
}

}  // namespace

bool can_stage(const SimPlatform& platform) {
  return !platform.filesystem_servers.empty() && platform.nodes_have_disks();
}

double play_staging(const SimPlatform& platform, int nodes, double bytes_per_node) {
  auto* engine = simgrid::s4u::Engine::get_instance();
  const double start = simgrid::s4u::Engine::get_clock();
  const auto bytes = static_cast<sg_size_t>(bytes_per_node);
  for (int node = 0; node < nodes; ++node) {
    const auto server = static_cast<std::size_t>(node) % platform.filesystem_servers.size();
    auto* server_disk = platform.filesystem_disks[server];
    auto* node_disk = platform.node_disks[static_cast<std::size_t>(node)];
    simgrid::s4u::Actor::create("stage-from" + std::to_string(node),
                                platform.filesystem_servers[server], [=] {
                                  auto io = server_disk->read_async(bytes);
                                  staging_box(node)->put(&kNoPayload, bytes);
                                  io->wait();
                                });
    simgrid::s4u::Actor::create("stage-to" + std::to_string(node),
                                platform.node_hosts[static_cast<std::size_t>(node)], [=] {
                                  auto io = node_disk->write_async(bytes);
                                  (void)staging_box(node)->get<int>();
                                  io->wait();
                                });
  }
  engine->run();
  return simgrid::s4u::Engine::get_clock() - start;
}

}  // namespace tessera::sim
