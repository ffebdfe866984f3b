#pragma once
// The rings a collective library (NCCL) builds over a node's NVLinks: directed rings through a
// set of the node's GPUs, each hop over a direct link, no direction of a link carrying more rings
// than it has bonded links. An all-reduce inside the node then runs one ring per channel, each
// over its own links, each carrying its share of the data. The DGX-1 V100's hybrid cube mesh
// holds six (its white paper: "three interwoven rings of single NVLink connections", each run
// both ways), the DGX-1 P100's four.
#include <cstdint>
#include <vector>

#include "tessera/core/scenario/cluster_spec.hpp"

namespace tessera {

// As many rings through `locals` (distinct local GPU indices of one node) as the links allow,
// each a cyclic order of `locals` starting at its first entry. Empty when the node has no NVLink
// mesh, fewer than two GPUs are given, or no ring of direct links passes through them all. The
// search is exact for nodes of up to 8 GPUs; beyond, it stops after a fixed amount of work and
// returns the most rings found, so it is deterministic.
std::vector<std::vector<int>> nvlink_rings(const NodeSpec& node, const std::vector<int>& locals);

}  // namespace tessera
