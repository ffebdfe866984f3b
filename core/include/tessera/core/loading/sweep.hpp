#pragma once
// Turns a scenario's sweep (strong or weak scaling over GPU counts) into one parallel
// configuration per point.
#include <vector>

#include "tessera/core/scenario/scenario.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"

namespace tessera {

// `base` is the configuration of the parallelism section. Strong scaling keeps the global batch
// (growing data) or the per-replica batch (growing a spatial axis); weak scaling keeps the
// per-replica batch and adds replicas. Throws InputError at the offending sweep value.
std::vector<ParallelConfig> expand_sweep(const SweepSection& sweep, const ParallelConfig& base,
                                         const std::string& file);

}  // namespace tessera
