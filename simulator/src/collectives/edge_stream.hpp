#pragma once
// A stream of chunks over one edge and direction of a pipelined collective (tree.cpp).
#include <cstddef>
#include <deque>
#include <limits>

#include <simgrid/s4u/Comm.hpp>

#include "tessera/simulator/fabric.hpp"

namespace tessera::sim {

// One edge and direction of one tree: sends its chunks in order, one transferring at a time, as a
// stream whose chunks pay their latency while earlier ones transfer.
//
// A SimGrid flow pays its route latency a before it transfers, taking no bandwidth meanwhile; sent
// one after the other, chunks would leave the link idle for a between transfers. So the next chunk
// is posted a before the transfer in progress is expected to end (or when the chunk becomes
// available, if later): its transfer follows on, one flow at a time on the edge, as the aggregated
// model's one flow per edge, direction and tree. The expected end follows the transfer's progress,
// measured since the previous look, at least every kLook latencies and halfway to the expected
// posting time: rates change when other flows on the links start or end, and a chunk posted late
// leaves a gap. A chunk is posted only once the last one posted transfers, so that at most one
// pays its latency (progress is then recent; tree_chunk_count keeps chunks longer than the latency
// on the slowest stream). Until the receiver has posted its receives (it posts them all at once),
// chunks go one at a time.
class EdgeStream {
 public:
  EdgeStream(const Fabric& fabric, int from, int to, int channel)
      : fabric_(fabric),
        from_(from),
        to_(to),
        channel_(channel),
        latency_(fabric.route_latency_seconds(from, to)) {}

  // Sends the next chunk, of `bytes`, available now; returns once it is posted.
  void send(double bytes);
  // Returns once every chunk has arrived.
  void drain();

 private:
  static constexpr double kSlack = 1e-3;  // of the latency: timing tolerance
  static constexpr double kLook = 0.5;    // of the latency: longest time between looks

  struct Posted {
    simgrid::s4u::CommPtr comm;
    double bytes;
  };

  // Forgets the chunks that have arrived, keeping the rate of the last one's transfer.
  void retire();
  // When the posted chunks, all transferring, are expected to be over, at the oldest one's rate
  // since the last look at it (or since its transfer started, or else the last chunk's rate); NaN
  // if no rate is known yet.
  double transfers_end(double now);

  const Fabric& fabric_;
  int from_;
  int to_;
  int channel_;
  double latency_;
  std::deque<Posted> posted_;  // not known to have arrived, oldest first
  std::size_t retired_ = 0;    // chunks known to have arrived
  double rate_ = 0;            // of the last chunk's transfer, bytes/s (0: none yet)
  // The last look at the oldest chunk's progress: which chunk (by retired_), when, bytes left.
  std::size_t seen_ = std::numeric_limits<std::size_t>::max();
  double seen_at_ = 0;
  double seen_left_ = 0;
};

}  // namespace tessera::sim
