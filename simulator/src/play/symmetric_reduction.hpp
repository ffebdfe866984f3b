#pragma once
// Symmetric simulation of a homogeneous cluster. Data-parallel replicas play the same program on
// identical nodes, so most of the cluster only repeats what a few nodes do. The reduction plays
// nodes [0, n) of N (n = N / k), node j standing for nodes j, j + n, j + 2n, ... (so it reads from
// the same file-system server, j mod servers, as each node it stands for), and keeps every
// resource a played node sees as it is in the full cluster:
//  - its own links (PCIe, NVLink, NIC, its fat-tree cables) and the fat-tree's shape (levels,
//    switch size, oversubscription): kept as they are;
//  - what all N nodes share, the file system (each server and the attachment): bandwidth divided
//    by k, so that each played flow gets the share it would get among the N nodes' flows;
//  - collectives over the data-parallel group: played over the played members with the full
//    group's step counts, shard sizes and tree depth (CollectiveContext::replicas = k); so at
//    least two of that group's GPUs are played (two replicas, unless a spatial split gives each
//    replica several).
// Exact where max-min sharing is symmetric (every flow on a shared link standing for k alike);
// where it is not (the tree all-reduce's node trees, traffic crossing an oversubscribed core) it
// is an approximation, measured against the full simulation in tests/simulator/symmetry_test.cpp.
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/scenario/cluster_spec.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"

namespace tessera::sim {

struct SymmetricReduction {
  int replicas = 1;        // k: each played node stands for k nodes; 1 plays every GPU
  ParallelConfig played;   // the played part of the configuration (data / k replicas)
  ClusterSpec cluster;     // the cluster to build: shared file-system bandwidths divided by k
  std::int64_t nodes = 0;  // N, of the full configuration (0 when GPUs do not fill whole nodes)
  std::int64_t played_nodes = 0;
  std::string why_full;  // when replicas == 1: why nothing was reduced

  // For the result's note, e.g. "symmetric simulation: 32 of 4096 nodes played, each standing
  // for 128".
  std::string description() const;
};

// The largest reduction k (dividing the nodes and the replicas evenly) that keeps at least
// `min_played_nodes` nodes, more than one leaf switch where the full cluster has several, and
// as many nodes on each file-system server. k = 1 when none does.
//
// Classes of identical nodes: with several node groups, k divides every group's nodes too, and
// the played cluster keeps each group with nodes / k nodes, in order: a played node of a group
// stands for k nodes of that group (same GPU, links and, with `batches` per full rank, batch).
// Where a group's GPUs have unequal batches (rounding) nothing is reduced.
//
// Stragglers (a cluster of one group, equal batches) whose nodes lie in one block of n
// consecutive nodes: each annotation moves to the played node that stands for its node, which
// is then slowed with the k - 1 others it stands for. A synchronous step waits for its slowest
// GPU either way; held to the full simulation within 1% by tests. Not reduced: stragglers in
// different blocks, with node groups, or with unequal batches (the proportional split).
//
// Not for steps reading the data store across nodes: its holders are drawn at random
// (sample_holders.hpp), so no node reads as another does; simulate_point plays those in full.
SymmetricReduction plan_symmetric_reduction(const ClusterSpec& cluster,
                                            const ParallelConfig& config,
                                            std::int64_t min_played_nodes,
                                            const std::vector<std::int64_t>& batches = {});

// Full simulation of `config` on `cluster`, with the reason given.
SymmetricReduction full_simulation(const ClusterSpec& cluster, const ParallelConfig& config,
                                   std::string why);

}  // namespace tessera::sim
