#include "log_uniform_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <unordered_set>

namespace tessera::kernels::real {

double SampledClasses::log_expected_count(std::int64_t c) const {
  const double p = std::log(static_cast<double>(c + 2) / static_cast<double>(c + 1)) /
                   std::log(static_cast<double>(vocabulary + 1));
  // 1 - (1 - p)^draws without cancellation for small p.
  return std::log(-std::expm1(static_cast<double>(draws) * std::log1p(-p)));
}

SampledClasses sample_log_uniform(std::int64_t vocabulary, std::int64_t count, std::uint64_t seed) {
  if (count <= 0 || count >= vocabulary) {
    throw std::invalid_argument("cannot sample " + std::to_string(count) +
                                " distinct classes besides the target from a vocabulary of " +
                                std::to_string(vocabulary));
  }
  SampledClasses sampled{.vocabulary = vocabulary};
  std::mt19937_64 generator(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const double log_range = std::log(static_cast<double>(vocabulary + 1));
  std::unordered_set<std::int32_t> seen;
  while (static_cast<std::int64_t>(sampled.classes.size()) < count) {
    // Inverse of the CDF log(c + 1) / log(V + 1).
    const auto c =
        static_cast<std::int64_t>(std::floor(std::exp(uniform(generator) * log_range))) - 1;
    ++sampled.draws;
    const auto id =
        static_cast<std::int32_t>(std::min(std::max<std::int64_t>(c, 0), vocabulary - 1));
    if (seen.insert(id).second) sampled.classes.push_back(id);
  }
  return sampled;
}

}  // namespace tessera::kernels::real
