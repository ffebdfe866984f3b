#pragma once
// Sharing a global batch between data-parallel replicas of unequal speed
// (parallelism.data_split: proportional), as mu-cuDNN shares a mini-batch between GPU types:
// each replica gets samples in proportion to its speed, in whole samples.
#include <cstdint>
#include <vector>

namespace tessera {

// `global_batch` samples shared in proportion to `speeds_samples_per_second` (one per replica,
// positive): each replica's exact share rounded down, the samples left over given one each to
// the largest remainders (ties to the lower index), and every replica at least one sample (taken
// from the largest shares). Throws std::invalid_argument if there are fewer samples than
// replicas or a speed is not positive.
std::vector<std::int64_t> split_in_proportion(std::int64_t global_batch,
                                              const std::vector<double>& speeds_samples_per_second);

}  // namespace tessera
