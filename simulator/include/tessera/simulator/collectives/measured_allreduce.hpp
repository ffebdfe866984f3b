#pragma once
// All-reduce times measured on the machine itself (`tessera profile` under MPI writes one row per
// size, op `allreduce`, shape "bytes B ranks R"), for groups whose ranks share one node. Where
// they exist, the simulator plays such an all-reduce as its measured time instead of flows over
// the node's links: on CPU ranks the sum is arithmetic through memory and Open MPI's own
// algorithm, which a link fitted from send/receive times does not describe.
#include <map>
#include <optional>
#include <string>

#include "tessera/core/common/measured_curve.hpp"
#include "tessera/core/cost/profile_database.hpp"

namespace tessera::sim {

class MeasuredAllreduce {
 public:
  // The rows of `profiles` for `device` (the cluster's gpu.model).
  MeasuredAllreduce(const ProfileDatabase& profiles, const std::string& device);

  bool empty() const { return by_ranks_.empty(); }
  // Seconds for `bytes` among `ranks` ranks: linear in bytes between the two measured sizes
  // around it (each segment an alpha-beta fit of its ends), extended along the last segment
  // above the largest and held at the smallest's time below it; none without two sizes measured
  // for that group size.
  std::optional<double> seconds(int ranks, double bytes) const;
  // "2 ranks: 5 sizes, 4 kB..256 MB" for a result's note.
  std::string description() const;

 private:
  std::map<int, MeasuredCurve> by_ranks_;  // seconds by bytes
};

}  // namespace tessera::sim
