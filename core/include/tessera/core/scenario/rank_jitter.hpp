#pragma once
// How much slower each rank of a machine computes at one moment than at its usual speed, measured
// on all ranks at once (`tessera profile` under mpirun: rank_passes.hpp). Ranks that synchronise
// wait for the slowest, so a step whose ranks each vary by a tenth, independently, takes longer
// than any rank's usual step (the expected maximum of their times): the simulator plays the step
// once per measured moment and reports the median step, as the real backend reports its median
// measured step. A cluster file's `rank_jitter` key; empty: every rank at its usual speed.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tessera/core/common/yaml_reader_fwd.hpp"

namespace tessera {

struct RankJitter {
  // One entry per measured moment: each measured rank's compute time then over its median time
  // (1.1: a tenth slower). Every moment has the same number of ranks.
  std::vector<std::vector<double>> slowdowns;

  bool empty() const { return slowdowns.empty(); }
  std::size_t moments() const { return slowdowns.size(); }
  // Rank `rank`'s slowdown at moment `moment` (taken modulo the moments). Ranks beyond the
  // measured ones reuse their columns at other moments (rank r at column r mod R, moved on by a
  // fixed stride per R ranks), as if independent of the measured ones.
  double slowdown(std::size_t moment, std::int64_t rank) const;
};

// `rank_jitter: {slowdowns: [[1.02, 0.97], [0.99, 1.13], ...]}`; errors name the file, line and
// key.
RankJitter parse_rank_jitter(const YamlValue& value);

}  // namespace tessera
