#pragma once
// Counter-based random numbers: element i's draw is SplitMix64's finaliser (Steele, Lea and
// Flood 2014) of seed + (i + 1) * its golden-ratio increment. Each draw depends only on
// (seed, i), whatever the loop order, thread count or launch geometry, so CPU loops and GPU
// kernels produce the same values from the same seed, and a shard can regenerate its part.
#include <cstdint>

#ifdef __CUDACC__
#define TESSERA_HOST_DEVICE __host__ __device__
#else
#define TESSERA_HOST_DEVICE
#endif

namespace tessera::kernels {

TESSERA_HOST_DEVICE inline std::uint64_t split_mix64(std::uint64_t state) {
  state = (state ^ (state >> 30)) * 0xbf58476d1ce4e5b9ULL;
  state = (state ^ (state >> 27)) * 0x94d049bb133111ebULL;
  return state ^ (state >> 31);
}

// The seed of stream `stream` drawn from `seed`: SplitMix64's finaliser of their combination, so
// consecutive streams (a dropout's samples) get unrelated seeds. The formula of the real
// backend's mix_seed, which seeds each layer's and step's dropout.
TESSERA_HOST_DEVICE inline std::uint64_t counter_stream_seed(std::uint64_t seed,
                                                             std::uint64_t stream) {
  return split_mix64(seed * 0x9e3779b97f4a7c15ULL + stream + 0x632be59bd9b4e019ULL);
}

// The top 24 bits of element `index`'s draw: a uniform integer below 2^24.
TESSERA_HOST_DEVICE inline std::uint64_t counter_draw24(std::uint64_t seed, std::uint64_t index) {
  return split_mix64(seed + (index + 1) * 0x9e3779b97f4a7c15ULL) >> 40;
}

// A uniform float in [-1, 1): the 24-bit draw scaled exactly (every value is a float).
TESSERA_HOST_DEVICE inline float counter_uniform(std::uint64_t seed, std::uint64_t index) {
  return static_cast<float>(counter_draw24(seed, index)) * 0x1.0p-23f - 1.0f;
}

}  // namespace tessera::kernels
