#include "collectives/concurrent_flows.hpp"

#include <algorithm>
#include <limits>

namespace tessera::sim {

void ConcurrentFlows::add(int from, int to) {
  for (const auto* link : fabric_.route_links(from, to)) ++flows_per_link_[link];
}

double ConcurrentFlows::bandwidth_bytes_per_second(int from, int to) const {
  double share = std::numeric_limits<double>::infinity();
  for (const auto* link : fabric_.route_links(from, to)) {
    const auto it = flows_per_link_.find(link);
    const int flows = it == flows_per_link_.end() ? 1 : std::max(it->second, 1);
    const bool shared = link->get_sharing_policy() != simgrid::s4u::Link::SharingPolicy::FATPIPE;
    share = std::min(share, link->get_bandwidth() / (shared ? flows : 1));
  }
  return share;
}

}  // namespace tessera::sim
