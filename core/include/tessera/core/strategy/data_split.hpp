#pragma once
// Sharing a global batch between data-parallel replicas of unequal speed
// (parallelism.data_split: proportional), as mu-cuDNN shares a mini-batch between GPU types:
// each replica gets samples in proportion to its speed, in whole samples.
#include <cstdint>
#include <functional>
#include <vector>

#include "tessera/core/scenario/cluster_spec.hpp"
#include "tessera/core/scenario/scenario.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"
#include "tessera/core/strategy/step_program.hpp"

namespace tessera {

// `global_batch` samples shared in proportion to `speeds_samples_per_second` (one per replica,
// positive): each replica's exact share rounded down, the samples left over given one each to
// the largest remainders (ties to the lower index), and every replica at least one sample (taken
// from the largest shares). Throws std::invalid_argument if there are fewer samples than
// replicas or a speed is not positive.
std::vector<std::int64_t> split_in_proportion(std::int64_t global_batch,
                                              const std::vector<double>& speeds_samples_per_second);

// The programs of one GPU type at one mini-batch (samples per replica), its kernels timed by the
// profile rows of that GPU's model where there are some, by its roofline elsewhere.
using ProgramBuilder =
    std::function<std::vector<StepProgram>(const GpuSpec& gpu, std::int64_t mini_batch)>;

// Samples per GPU of the whole point (rank order of the full cluster), from `split`: the
// mini-batch each when equal; in proportion to each GPU's speed when proportional, a GPU's speed
// being the mini-batch over its compute time at the mini-batch (its group's programs, stretched
// by its clock; `build` is called only then). Pure data parallelism only (the scenario loader
// refuses the others).
std::vector<std::int64_t> batches_of_ranks(const ClusterSpec& cluster, const ParallelConfig& config,
                                           DataSplit split, const ProgramBuilder& build);

}  // namespace tessera
