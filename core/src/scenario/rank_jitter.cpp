#include "tessera/core/scenario/rank_jitter.hpp"

#include "tessera/core/common/yaml_reader.hpp"

namespace tessera {
namespace {

// Ranks beyond the measured ones take their column at a moment this far on per R ranks: a prime,
// so that no two of them meet at the same moment before every moment was used.
constexpr std::size_t kMomentStride = 7919;

}  // namespace

double RankJitter::slowdown(std::size_t moment, std::int64_t rank) const {
  const auto measured = slowdowns.empty() ? 0 : static_cast<std::int64_t>(slowdowns.front().size());
  if (measured == 0) return 1.0;
  const auto beyond = static_cast<std::size_t>(rank / measured);
  const auto& at = slowdowns[(moment + beyond * kMomentStride) % slowdowns.size()];
  return at[static_cast<std::size_t>(rank % measured)];
}

RankJitter parse_rank_jitter(const YamlValue& value) {
  YamlMap map(value, {"slowdowns"});
  RankJitter jitter;
  const auto moments = map.required("slowdowns",
                                    "a list of moments, each a list of every measured rank's "
                                    "compute time over its median (e.g. [[1.02, 0.97]])");
  for (const auto& moment : moments.as_sequence(1)) {
    std::vector<double> ranks;
    // A slowdown outside [0.1, 10] is a unit mistake (a percentage, or seconds), not a machine.
    for (const auto& rank : moment.as_sequence(1)) ranks.push_back(rank.as_number(0.1, 10.0));
    if (!jitter.slowdowns.empty() && ranks.size() != jitter.slowdowns.front().size()) {
      moment.fail("as many ranks as the first moment (" +
                  std::to_string(jitter.slowdowns.front().size()) + ")");
    }
    jitter.slowdowns.push_back(std::move(ranks));
  }
  return jitter;
}

}  // namespace tessera
