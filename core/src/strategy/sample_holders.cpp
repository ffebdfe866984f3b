#include "tessera/core/strategy/sample_holders.hpp"

namespace tessera {
namespace {

// SplitMix64's finaliser: every input bit moves every output bit, so neighbouring replicas and
// samples get unrelated holders.
std::uint64_t mix(std::uint64_t value) {
  value += 0x9e3779b97f4a7c15ULL;
  value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9ULL;
  value = (value ^ (value >> 27)) * 0x94d049bb133111ebULL;
  return value ^ (value >> 31);
}

}  // namespace

std::int64_t sample_holder(std::uint64_t draw, std::int64_t replica, std::int64_t sample,
                           std::int64_t nodes) {
  if (nodes <= 1) return 0;
  const std::uint64_t key = mix(mix(mix(draw) ^ static_cast<std::uint64_t>(replica)) ^
                                static_cast<std::uint64_t>(sample));
  // The modulo's bias is below nodes / 2^64.
  return static_cast<std::int64_t>(key % static_cast<std::uint64_t>(nodes));
}

}  // namespace tessera
