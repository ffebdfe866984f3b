#include "tessera/core/data_split.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace tessera {

std::vector<std::int64_t> split_in_proportion(
    std::int64_t global_batch, const std::vector<double>& speeds_samples_per_second) {
  const auto& speeds = speeds_samples_per_second;
  const auto replicas = static_cast<std::int64_t>(speeds.size());
  if (replicas == 0 || global_batch < replicas) {
    throw std::invalid_argument("cannot share " + std::to_string(global_batch) +
                                " samples between " + std::to_string(replicas) +
                                " replicas, at least one each");
  }
  double total = 0;
  for (double speed : speeds) {
    if (!(speed > 0) || !std::isfinite(speed)) {
      throw std::invalid_argument("replica speeds must be positive and finite");
    }
    total += speed;
  }
  std::vector<std::int64_t> shares(speeds.size());
  std::vector<double> remainders(speeds.size());
  std::int64_t given = 0;
  for (std::size_t r = 0; r < speeds.size(); ++r) {
    const double exact = static_cast<double>(global_batch) * speeds[r] / total;
    shares[r] = static_cast<std::int64_t>(std::floor(exact));
    remainders[r] = exact - static_cast<double>(shares[r]);
    given += shares[r];
  }
  std::vector<std::size_t> order(speeds.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return remainders[a] > remainders[b]; });
  for (std::size_t i = 0; given < global_batch; ++i, ++given) ++shares[order[i % order.size()]];
  // A replica with no sample would not train; it takes one from the largest share.
  for (auto& share : shares) {
    if (share > 0) continue;
    *std::max_element(shares.begin(), shares.end()) -= 1;
    share = 1;
  }
  return shares;
}

}  // namespace tessera
