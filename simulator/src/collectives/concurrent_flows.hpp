#pragma once
// Flows that run at once, for the alpha-beta predictions (prediction.cpp): the bandwidth each one
// gets where they cross the same links.
#include <unordered_map>

#include <simgrid/s4u/Link.hpp>

#include "tessera/simulator/fabric.hpp"

namespace tessera::sim {

// Each link direction's bandwidth is split evenly among the flows that cross it (a fat pipe is not
// split), and a flow gets its narrowest share. Where the flows are alike (the rings of one
// collective) that is SimGrid's max-min share; where some are held back elsewhere the others get
// more in the simulation than predicted here.
class ConcurrentFlows {
 public:
  explicit ConcurrentFlows(const Fabric& fabric) : fabric_(fabric) {}

  void add(int from, int to);
  // The share of an added flow, from `from` to `to`, in bytes per second.
  double bandwidth_bytes_per_second(int from, int to) const;

 private:
  const Fabric& fabric_;
  std::unordered_map<const simgrid::s4u::Link*, int> flows_per_link_;
};

}  // namespace tessera::sim
