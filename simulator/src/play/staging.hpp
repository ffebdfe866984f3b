#pragma once
// The staging phase before the first step (io.store: node_local, input_source.hpp): every node
// of the point copies its share of the data set from the parallel file system to its node-local
// storage, all nodes at once, as MLPerf HPC submissions stage. Each node's copy is one stream
// from a file-system server (the one its reads use): the server's disk reads, the network
// carries, the node's disk writes, pipelined, so a node is done when the slowest of the three has
// moved its share. Nodes sharing a server or a link share their bandwidth as SimGrid shares it.
#include "tessera/simulator/platform/platform.hpp"

namespace tessera::sim {

// Whether `platform` has what staging moves through (file-system servers, node-local disks).
bool can_stage(const SimPlatform& platform);

// Plays the staging of `bytes_per_node` on the first `nodes` nodes of `platform` in the running
// engine, after whatever it played before; returns the seconds until the last node is done.
double play_staging(const SimPlatform& platform, int nodes, double bytes_per_node);

}  // namespace tessera::sim
