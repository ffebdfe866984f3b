#pragma once
// Point-to-point transfers between GPU ranks of a simulated platform, for use inside S4U actors.
// Every transfer is one SimGrid flow of the whole payload (no per-chunk activities): SimGrid's
// bandwidth sharing then models contention between halos, collectives, I/O and other traffic.
// This is the one place that names mailboxes, so collectives and actors never collide.
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Link.hpp>

namespace tessera::sim {

class Fabric {
 public:
  explicit Fabric(std::vector<simgrid::s4u::Host*> gpu_hosts);

  int size() const { return static_cast<int>(hosts_.size()); }
  simgrid::s4u::Host* host(int rank) const { return hosts_.at(static_cast<std::size_t>(rank)); }

  // Each (from, to, channel) triple is a FIFO: sends and receives match in the order posted.
  // Channels keep independent streams apart (e.g. halos on 0, the comm stream on 1).
  simgrid::s4u::CommPtr send_async(int from, int to, double bytes, int channel = 0) const;
  simgrid::s4u::CommPtr recv_async(int to, int from, int channel = 0) const;
  void send(int from, int to, double bytes, int channel = 0) const;
  void recv(int to, int from, int channel = 0) const;
  // Both directions of an exchange at once; returns when both have completed.
  void exchange(int me, int peer, double bytes_out, int channel = 0) const;

  // Whether a transfer has finished, without waiting. SimGrid 3.32 keeps every comm an actor
  // started in a list until a wait takes it out, and each comm that finishes scans its actor's
  // list; test() does not take it out (nor does a wait() after it), so polling with test()
  // made the simulation of long pipelines quadratic in their micro-batches. A wait with no
  // time to wait does.
  static bool finished(const simgrid::s4u::CommPtr& comm);

  // Latency of the route between two ranks (sum of link latencies), in seconds.
  double route_latency_seconds(int from, int to) const;
  // Bandwidth of the route's narrowest link, in bytes per second.
  double route_bandwidth_bytes_per_second(int from, int to) const;
  // The route's links in order, each in its direction (a split-duplex link's up or down half).
  const std::vector<simgrid::s4u::Link*>& route_links(int from, int to) const;

 private:
  simgrid::s4u::Mailbox* mailbox(int from, int to, int channel) const;

  std::vector<simgrid::s4u::Host*> hosts_;
  // Mailboxes by (from, to, channel), found once by name: building and hashing the name for every
  // message cost more than a tenth of a large simulation (two strings per transfer).
  struct MailboxKey {
    int from;
    int to;
    int channel;
    bool operator==(const MailboxKey&) const = default;
  };
  struct MailboxKeyHash {
    std::size_t operator()(const MailboxKey& key) const;
  };
  mutable std::unordered_map<MailboxKey, simgrid::s4u::Mailbox*, MailboxKeyHash> mailboxes_;
  // Routes by (from, to), computed once: every member of every collective asks for its
  // neighbours' latencies, and SimGrid walks the zone hierarchy for each question.
  struct Route {
    double latency_seconds;
    double bandwidth_bytes_per_second;
    std::vector<simgrid::s4u::Link*> links;
  };
  const Route& route(int from, int to) const;
  mutable std::unordered_map<std::uint64_t, Route> routes_;
};

}  // namespace tessera::sim
