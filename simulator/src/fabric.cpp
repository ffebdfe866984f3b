#include "tessera/simulator/fabric.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <utility>

#include <simgrid/s4u/Link.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include "no_payload.hpp"

namespace tessera::sim {

Fabric::Fabric(std::vector<simgrid::s4u::Host*> gpu_hosts) : hosts_(std::move(gpu_hosts)) {}

std::size_t Fabric::MailboxKeyHash::operator()(const MailboxKey& key) const {
  // Ranks below 2^21 and channels below 2^22 in absolute value mix without overlapping much;
  // collisions cost only a comparison.
  const auto mixed = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(key.channel)) << 42) ^
                     (static_cast<std::uint64_t>(static_cast<std::uint32_t>(key.from)) << 21) ^
                     static_cast<std::uint64_t>(static_cast<std::uint32_t>(key.to));
  return std::hash<std::uint64_t>{}(mixed);
}

simgrid::s4u::Mailbox* Fabric::mailbox(int from, int to, int channel) const {
  const MailboxKey key{from, to, channel};
  if (const auto it = mailboxes_.find(key); it != mailboxes_.end()) return it->second;
  // by_name is a simcall: other actors run before it returns and may ask for the same mailbox, so
  // the entry is made only once the mailbox is known (an entry made before would be seen empty).
  auto* const found = simgrid::s4u::Mailbox::by_name(
      "m" + std::to_string(channel) + ":" + std::to_string(from) + ">" + std::to_string(to));
  mailboxes_.emplace(key, found);
  return found;
}

simgrid::s4u::CommPtr Fabric::send_async(int from, int to, double bytes, int channel) const {
  return mailbox(from, to, channel)->put_async(&kNoPayload, static_cast<uint64_t>(bytes));
}

simgrid::s4u::CommPtr Fabric::recv_async(int to, int from, int channel) const {
  return mailbox(from, to, channel)->get_async<int>(&received_payload);
}

void Fabric::send(int from, int to, double bytes, int channel) const {
  send_async(from, to, bytes, channel)->wait();
}

void Fabric::recv(int to, int from, int channel) const {
  recv_async(to, from, channel)->wait();
}

bool Fabric::finished(const simgrid::s4u::CommPtr& comm) {
  return simgrid::s4u::Comm::wait_any_for({comm}, 0.0) == 0;
}

void Fabric::exchange(int me, int peer, double bytes_out, int channel) const {
  auto outgoing = send_async(me, peer, bytes_out, channel);
  auto incoming = recv_async(me, peer, channel);
  outgoing->wait();
  incoming->wait();
}

const Fabric::Route& Fabric::route(int from, int to) const {
  const auto key = (static_cast<std::uint64_t>(static_cast<std::uint32_t>(from)) << 32) |
                   static_cast<std::uint32_t>(to);
  if (const auto it = routes_.find(key); it != routes_.end()) return it->second;
  std::vector<simgrid::s4u::Link*> links;
  double latency = 0;
  host(from)->route_to(host(to), links, &latency);
  double bandwidth = std::numeric_limits<double>::infinity();
  for (const auto* link : links) bandwidth = std::min(bandwidth, link->get_bandwidth());
  return routes_.emplace(key, Route{latency, bandwidth, std::move(links)}).first->second;
}

double Fabric::route_latency_seconds(int from, int to) const {
  return route(from, to).latency_seconds;
}

double Fabric::route_bandwidth_bytes_per_second(int from, int to) const {
  return route(from, to).bandwidth_bytes_per_second;
}

const std::vector<simgrid::s4u::Link*>& Fabric::route_links(int from, int to) const {
  return route(from, to).links;
}

}  // namespace tessera::sim
