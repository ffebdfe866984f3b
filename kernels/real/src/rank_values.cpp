#include "rank_values.hpp"

#include <algorithm>

namespace tessera::kernels::real {

std::vector<double> gather_values(Communicator& group, double value) {
  std::vector<double> values(static_cast<std::size_t>(group.size()), 0.0);
  values[static_cast<std::size_t>(group.rank())] = value;
  group.allreduce_sum(values.data(), values.size());
  return values;
}

std::vector<double> values_of_rank(Communicator& group, int owner, std::vector<double> values) {
  if (group.rank() != owner) std::fill(values.begin(), values.end(), 0.0);
  group.allreduce_sum(values.data(), values.size());
  return values;
}

std::vector<LayerComputeTime> layer_times_of_computing_ranks(Communicator& group,
                                                             const std::vector<double>& steps,
                                                             std::vector<LayerComputeTime> times) {
  const auto ranks = static_cast<std::size_t>(group.size());
  const std::size_t entries = times.size();
  std::vector<double> table(ranks * entries, 0.0);  // rank-major; each rank fills its row
  for (std::size_t i = 0; i < entries; ++i) {
    table[static_cast<std::size_t>(group.rank()) * entries + i] = times[i].seconds;
  }
  group.allreduce_sum(table.data(), table.size());
  for (std::size_t i = 0; i < entries; ++i) {
    const bool update = times[i].pass == "update";
    double chosen_by = -1;  // the chosen rank's step, or its update time
    times[i].seconds = 0;
    for (std::size_t r = 0; r < ranks; ++r) {
      const double seconds = table[r * entries + i];
      const double by = update ? seconds : steps[r];
      if (seconds > 0 && by > chosen_by) {
        chosen_by = by;
        times[i].seconds = seconds;
      }
    }
  }
  return times;
}

}  // namespace tessera::kernels::real
