#pragma once
// Counter-based hashing: SplitMix64's step (Steele, Lea and Flood 2014) as a pure function, so a
// draw depends only on the numbers it is keyed by, whatever the order, thread or process that
// asks for it. Every input bit moves every output bit, so neighbouring keys get unrelated values.
#include <cstdint>

namespace tessera {

inline std::uint64_t split_mix64_step(std::uint64_t value) {
  value += 0x9e3779b97f4a7c15ULL;
  value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9ULL;
  value = (value ^ (value >> 27)) * 0x94d049bb133111ebULL;
  return value ^ (value >> 31);
}

// The key of item (first, second) drawn from `seed`, e.g. a sample's channel or a replica's sample.
inline std::uint64_t counter_key(std::uint64_t seed, std::int64_t first, std::int64_t second) {
  return split_mix64_step(
      split_mix64_step(split_mix64_step(seed) ^ static_cast<std::uint64_t>(first)) ^
      static_cast<std::uint64_t>(second));
}

}  // namespace tessera
