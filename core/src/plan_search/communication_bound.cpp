#include "tessera/core/plan_search/communication_bound.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "tessera/core/scenario/gpu_route_links.hpp"
#include "tessera/core/strategy/halo_copies.hpp"
#include "tessera/core/strategy/rank_numbering.hpp"

namespace tessera {

double fastest_bandwidth_factor(const std::string& network_model) {
  // SMPI's smpi/bw-factor default peaks at 1.08739 (messages of 5,776 to 9,375 bytes); CM02's
  // factor is 1 and LV08's 0.97.
  return network_model == "SMPI" ? 1.08739 : 1.0;
}

namespace {

// How a pattern of one GPU's flows loads the links they cross, per byte of the pattern's two
// sizes (a halo exchange: the planes for the lower and for the upper neighbour): built once per
// GPU, then any op of that pattern costs a pass over its links.
class LinkShares {
 public:
  void add(const GpuRoute& route, double per_lower_byte, double per_upper_byte) {
    for (const RouteLink& link : route) {
      entries_.push_back(
          {link.key(), link.bandwidth_bytes_per_second, per_lower_byte, per_upper_byte});
    }
  }
  // Merges the entries of one link.
  void seal() {
    std::sort(entries_.begin(), entries_.end(),
              [](const Entry& a, const Entry& b) { return a.key < b.key; });
    std::size_t kept = 0;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      if (kept > 0 && entries_[kept - 1].key == entries_[i].key) {
        entries_[kept - 1].per_lower_byte += entries_[i].per_lower_byte;
        entries_[kept - 1].per_upper_byte += entries_[i].per_upper_byte;
      } else {
        entries_[kept++] = entries_[i];
      }
    }
    entries_.resize(kept);
  }
  // The least time the flows take: the most loaded link's bytes over its bandwidth.
  double seconds(double lower_bytes, double upper_bytes) const {
    double longest = 0;
    for (const Entry& entry : entries_) {
      if (entry.bandwidth <= 0) continue;
      const double bytes = entry.per_lower_byte * lower_bytes + entry.per_upper_byte * upper_bytes;
      longest = std::max(longest, bytes / entry.bandwidth);
    }
    return longest;
  }

 private:
  struct Entry {
    std::uint64_t key;
    double bandwidth;
    double per_lower_byte;
    double per_upper_byte;
  };
  std::vector<Entry> entries_;
};

// The most bytes per second `rank` can receive from `members`: the last links of their routes
// to it added up, each no faster than the link before it where every route through it comes
// that way (the NIC ahead of the PCIe link, for members on other nodes).
double ingress_bytes_per_second(const ClusterSpec& cluster, int rank,
                                const std::vector<int>& members) {
  struct Ingress {
    RouteLink last;
    std::optional<RouteLink> before;  // the link before it, while every route agrees
    bool routes_agree = true;
  };
  std::vector<Ingress> ingresses;
  const std::int64_t per_node = std::max<std::int64_t>(cluster.gpus_per_node, 1);
  bool off_node_seen = false;
  for (int member : members) {
    if (member == rank) continue;
    // Every member on another node reaches the rank the same way (its NIC, then its PCIe link).
    const bool off_node = member / per_node != rank / per_node;
    if (off_node && off_node_seen) continue;
    off_node_seen = off_node_seen || off_node;
    const auto route = gpu_route_links(cluster, member, rank);
    const RouteLink& last = route.back();
    const std::optional<RouteLink> before =
        route.size() > 1 ? std::optional<RouteLink>(route[route.size() - 2]) : std::nullopt;
    auto it = std::find_if(ingresses.begin(), ingresses.end(), [&](const Ingress& ingress) {
      return ingress.last.key() == last.key();
    });
    if (it == ingresses.end()) {
      ingresses.push_back({last, before, true});
    } else if (!before || !it->before || it->before->key() != before->key()) {
      it->routes_agree = false;
    }
  }
  double total = 0;
  for (const auto& ingress : ingresses) {
    double rate = ingress.last.bandwidth_bytes_per_second;
    if (ingress.routes_agree && ingress.before) {
      rate = std::min(rate, ingress.before->bandwidth_bytes_per_second);
    }
    total += rate;
  }
  return total;
}

std::vector<int> group_of(const RankNumbering& layout, int rank, CollectiveGroup group) {
  switch (group) {
    case CollectiveGroup::spatial:
      return layout.spatial_group(rank);
    case CollectiveGroup::tensor:
      return layout.tensor_group(rank);
    case CollectiveGroup::stage:
      return layout.stage_group(layout.stage_of(rank), layout.tensor_index_of(rank));
    case CollectiveGroup::table:
      break;
  }
  return {};  // a tied table's group: left out
}

class RankWalk {
 public:
  RankWalk(const ClusterSpec& cluster, const RankNumbering& layout,
           const CommunicationBoundSettings& settings, int rank)
      : cluster_(cluster), layout_(layout), settings_(settings), rank_(rank) {}

  double play(const StepProgram& program) {
    double clock = 0;
    std::map<int, double> started;       // halo exchange -> when its flows were posted
    double communication_free = 0;       // when the gradient stream is done with what it was given
    std::vector<double> buckets_summed;  // when each queued bucket is summed, at the soonest
    for (const StepOp& op : program.ops) {
      switch (op.kind) {
        case StepOpKind::compute:
        case StepOpKind::update:
          clock += op.seconds;
          break;
        case StepOpKind::halo_start:
          clock += halo_copies(op);
          started[op.exchange] = clock;
          break;
        case StepOpKind::halo_wait:
          if (const auto it = started.find(op.exchange); it != started.end()) {
            clock = std::max(clock, it->second + halo_seconds(op));
          }
          clock += halo_copies(op);
          break;
        case StepOpKind::group_alltoall:
          clock += alltoall_seconds(op);
          break;
        case StepOpKind::group_allgather:
          clock += received_seconds(op.group, op.bytes, true);
          break;
        case StepOpKind::group_allreduce:
          if (!settings_.allreduce_may_be_measured) {
            clock += received_seconds(op.group, op.bytes, false);
          }
          break;
        case StepOpKind::gradient_allreduce:
        case StepOpKind::gradient_reduce_scatter: {
          // The communication stream sums the buckets one after another, each from when it is
          // queued.
          const bool scatter = op.kind == StepOpKind::gradient_reduce_scatter;
          if (scatter || !settings_.allreduce_may_be_measured) {
            communication_free = std::max(communication_free, clock) +
                                 received_seconds(CollectiveGroup::stage, op.bytes, scatter);
          }
          buckets_summed.push_back(std::max(communication_free, clock));
          break;
        }
        case StepOpKind::gradient_wait: {
          const std::size_t until =
              op.bucket >= 0 ? static_cast<std::size_t>(op.bucket) + 1 : buckets_summed.size();
          if (until > 0 && until <= buckets_summed.size()) {
            clock = std::max(clock, buckets_summed[until - 1]);
          }
          break;
        }
        default:
          break;
      }
    }
    return clock;
  }

 private:
  double halo_copies(const StepOp& op) const {
    return halo_copy_seconds(op, layout_.neighbour(rank_, op.axis, -1) >= 0,
                             layout_.neighbour(rank_, op.axis, +1) >= 0);
  }

  // The exchange's flows: to and from each neighbour along the axis (a neighbour sends the
  // rank what the rank sends its other side).
  double halo_seconds(const StepOp& op) {
    auto& shares = halo_shares_[op.axis];
    if (!shares) {
      shares.emplace();
      for (int step : {-1, +1}) {
        const int peer = layout_.neighbour(rank_, op.axis, step);
        if (peer < 0) continue;
        const double lower = step < 0 ? 1 : 0;  // of the outgoing flow; incoming: the other
        shares->add(gpu_route_links(cluster_, rank_, peer), lower, 1 - lower);
        shares->add(gpu_route_links(cluster_, peer, rank_), 1 - lower, lower);
      }
      shares->seal();
    }
    return shares->seconds(op.bytes_to_lower, op.bytes_to_upper) / settings_.bandwidth_factor;
  }

  // A flow of `bytes` to and from every other member of the spatial group.
  double alltoall_seconds(const StepOp& op) {
    if (!alltoall_shares_) {
      alltoall_shares_.emplace();
      for (int peer : layout_.spatial_group(rank_)) {
        if (peer == rank_) continue;
        alltoall_shares_->add(gpu_route_links(cluster_, rank_, peer), 1, 0);
        alltoall_shares_->add(gpu_route_links(cluster_, peer, rank_), 1, 0);
      }
      alltoall_shares_->seal();
    }
    return alltoall_shares_->seconds(op.bytes, 0) / settings_.bandwidth_factor;
  }

  // An all-gather (or reduce-scatter) member receives (p-1)/p of the `bytes`, an all-reduce
  // member all of them.
  double received_seconds(CollectiveGroup over, double bytes, bool gather) {
    const GroupIngress& group = ingress_of(over);
    if (group.members < 2 || group.bytes_per_second <= 0) return 0;
    const auto size = static_cast<double>(group.members);
    const double received = gather ? bytes * (size - 1) / size : bytes;
    return received / group.bytes_per_second / settings_.bandwidth_factor;
  }

  struct GroupIngress {
    std::size_t members = 0;
    double bytes_per_second = 0;
  };

  const GroupIngress& ingress_of(CollectiveGroup group) {
    const auto key = static_cast<int>(group);
    if (const auto it = ingress_.find(key); it != ingress_.end()) return it->second;
    const auto members = group_of(layout_, rank_, group);
    return ingress_[key] = {members.size(), ingress_bytes_per_second(cluster_, rank_, members)};
  }

  const ClusterSpec& cluster_;
  const RankNumbering& layout_;
  const CommunicationBoundSettings& settings_;
  int rank_;
  std::map<int, GroupIngress> ingress_;                   // per group kind
  std::map<int, std::optional<LinkShares>> halo_shares_;  // per axis
  std::optional<LinkShares> alltoall_shares_;
};

// The GPUs of stage `stage`'s first replica walked: those of its first node and of the node
// holding its middle GPU.
std::vector<int> walked_ranks(const ParallelConfig& config, std::int64_t per_node, int stage) {
  const std::int64_t block = config.spatial_parts() * config.tensor;
  const std::int64_t first = stage * block, end = first + block;
  std::vector<int> ranks;
  for (const std::int64_t at : {first, first + block / 2}) {
    const std::int64_t node_start = std::max(first, at / per_node * per_node);
    const std::int64_t node_end = std::min(end, (at / per_node + 1) * per_node);
    for (std::int64_t rank = node_start; rank < node_end; ++rank) {
      if (std::find(ranks.begin(), ranks.end(), rank) == ranks.end()) {
        ranks.push_back(static_cast<int>(rank));
      }
    }
  }
  return ranks;
}

}  // namespace

double stage_transfer_seconds(const ParallelConfig& config, const ClusterSpec& cluster,
                              const CommunicationBoundSettings& settings, int from_stage,
                              int to_stage, double bytes) {
  if (bytes <= 0 || from_stage == to_stage) return 0;
  const std::int64_t block = config.spatial_parts() * config.tensor;
  double slowest = 0;
  for (const RouteLink& link : gpu_route_links(cluster, from_stage * block, to_stage * block)) {
    if (link.bandwidth_bytes_per_second > 0 &&
        (slowest == 0 || link.bandwidth_bytes_per_second < slowest)) {
      slowest = link.bandwidth_bytes_per_second;
    }
  }
  return slowest > 0 ? bytes / slowest / settings.bandwidth_factor : 0;
}

double communication_step_bound(const std::vector<StepProgram>& programs,
                                const ParallelConfig& config, const ClusterSpec& cluster,
                                const CommunicationBoundSettings& settings) {
  const RankNumbering layout(config);
  const std::int64_t per_node = std::max<std::int64_t>(cluster.gpus_per_node, 1);
  double bound = 0;
  for (const StepProgram& program : programs) {
    for (int rank : walked_ranks(config, per_node, program.stage)) {
      RankWalk walk(cluster, layout, settings, rank);
      bound = std::max(bound, walk.play(program));
    }
  }
  return bound;
}

}  // namespace tessera
