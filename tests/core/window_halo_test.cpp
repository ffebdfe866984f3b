// Spatial halos (window_halo) against the reference facts and a brute-force enumeration of every
// output position's window taps.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/model/shape_inference.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"

namespace tessera {
namespace {
// ---------------------------------------------------------------------------------------------
// window_halo against the reference facts

Halo conv_halo(std::int64_t input, std::int64_t parts, std::int64_t kernel, std::int64_t stride,
               std::int64_t padding, std::int64_t dilation = 1) {
  const auto output = window_output_extent(input, kernel, stride, padding, dilation, false);
  return window_halo(LayerKind::convolution, input, output, parts, kernel, stride, padding,
                     dilation);
}

Halo pool_halo(std::int64_t input, std::int64_t parts, std::int64_t kernel, std::int64_t stride,
               std::int64_t padding) {
  const auto output = window_output_extent(input, kernel, stride, padding, 1, false);
  return window_halo(LayerKind::pooling, input, output, parts, kernel, stride, padding, 1);
}

TEST(WindowHalo, SameConvolutionNeedsHalfTheKernelFromEachNeighbour) {
  for (std::int64_t parts = 2; parts <= 8; ++parts) {
    for (std::int64_t kernel : {1, 3, 5}) {
      const std::int64_t input = 16 * parts;
      const std::int64_t half = kernel / 2;
      EXPECT_EQ(conv_halo(input, parts, kernel, 1, half), (Halo{half, half}))
          << "kernel " << kernel << ", " << parts << " parts";
    }
  }
}

TEST(WindowHalo, DilatedSameConvolutionNeedsHalfKernelTimesDilation) {
  for (std::int64_t parts = 2; parts <= 8; ++parts) {
    for (std::int64_t kernel : {1, 3, 5}) {
      const std::int64_t input = 16 * parts;
      const std::int64_t dilation = 2;
      const std::int64_t half = kernel / 2 * dilation;
      EXPECT_EQ(conv_halo(input, parts, kernel, 1, half, dilation), (Halo{half, half}))
          << "kernel " << kernel << ", " << parts << " parts";
    }
  }
}

TEST(WindowHalo, StrideTwoConvolutionOnEvenSlabsNeedsOneLowerPlane) {
  for (std::int64_t parts = 2; parts <= 8; ++parts) {
    for (std::int64_t slab : {2, 4, 8, 16}) {
      EXPECT_EQ(conv_halo(slab * parts, parts, 3, 2, 1), (Halo{1, 0}))
          << "slab " << slab << ", " << parts << " parts";
    }
  }
}

TEST(WindowHalo, AveragePool3Stride2Pad1OnEvenSlabsNeedsOneLowerPlane) {
  for (std::int64_t parts = 2; parts <= 8; ++parts) {
    for (std::int64_t slab : {2, 4, 8, 16}) {
      EXPECT_EQ(pool_halo(slab * parts, parts, 3, 2, 1), (Halo{1, 0}))
          << "slab " << slab << ", " << parts << " parts";
    }
  }
}

TEST(WindowHalo, Pool2Stride2NeedsNothing) {
  for (std::int64_t parts = 2; parts <= 8; ++parts) {
    for (std::int64_t slab : {2, 4, 8, 16}) {
      EXPECT_EQ(pool_halo(slab * parts, parts, 2, 2, 0), (Halo{0, 0}))
          << "slab " << slab << ", " << parts << " parts";
    }
  }
}

TEST(WindowHalo, TransposedConvolution2Stride2NeedsNothing) {
  for (std::int64_t parts = 2; parts <= 8; ++parts) {
    for (std::int64_t slab : {1, 2, 4, 8}) {
      const std::int64_t input = slab * parts;
      EXPECT_EQ(window_halo(LayerKind::transposed_convolution, input, 2 * input, parts, 2, 2, 0, 1),
                (Halo{0, 0}))
          << "slab " << slab << ", " << parts << " parts";
    }
  }
}

TEST(WindowHalo, PointwiseConvolutionNeedsNothing) {
  for (std::int64_t parts = 2; parts <= 8; ++parts) {
    EXPECT_EQ(conv_halo(8 * parts, parts, 1, 1, 0), (Halo{0, 0}));
  }
}

TEST(WindowHalo, OnePartNeedsNothing) {
  EXPECT_EQ(conv_halo(32, 1, 5, 1, 2), (Halo{0, 0}));
  EXPECT_EQ(pool_halo(32, 1, 3, 2, 1), (Halo{0, 0}));
}

// ---------------------------------------------------------------------------------------------
// window_halo against brute force: enumerate every output position's window taps.

struct HaloBruteForce {
  Halo halo;
  // Some rank's window runs through its neighbours' slabs and on into the padding beyond the
  // volume (a halo at least a whole slab wide); window_halo must be exact there too.
  bool reaches_past_the_volume = false;
};

// How far beyond its own input slab each rank's outputs reach (taps in the padding ignored), as the
// maximum over ranks.
HaloBruteForce brute_force_halo(LayerKind kind, std::int64_t input, std::int64_t output,
                                std::int64_t parts, std::int64_t kernel, std::int64_t stride,
                                std::int64_t padding, std::int64_t dilation) {
  const std::int64_t local_in = input / parts, local_out = output / parts;
  HaloBruteForce result;
  for (std::int64_t rank = 0; rank < parts; ++rank) {
    std::int64_t lowest = std::numeric_limits<std::int64_t>::max();
    std::int64_t highest = std::numeric_limits<std::int64_t>::min();
    auto touch = [&](std::int64_t index) {
      if ((index < 0 && rank > 0) || (index >= input && rank < parts - 1)) {
        result.reaches_past_the_volume = true;
      }
      if (index < 0 || index >= input) return;  // a padding tap
      lowest = std::min(lowest, index);
      highest = std::max(highest, index);
    };
    for (std::int64_t o = rank * local_out; o < (rank + 1) * local_out; ++o) {
      for (std::int64_t tap = 0; tap < kernel; ++tap) {
        if (kind == LayerKind::transposed_convolution) {
          // Input i scatters to outputs i*stride - padding + tap*dilation.
          const std::int64_t scaled = o + padding - tap * dilation;
          if ((scaled % stride + stride) % stride == 0) touch(scaled / stride);
        } else {
          touch(o * stride - padding + tap * dilation);
        }
      }
    }
    if (lowest > highest) continue;  // only padding
    const std::int64_t own_first = rank * local_in, own_last = (rank + 1) * local_in - 1;
    result.halo.lower = std::max(result.halo.lower, own_first - lowest);
    result.halo.upper = std::max(result.halo.upper, highest - own_last);
  }
  return result;
}

TEST(WindowHalo, MatchesBruteForceEnumerationOfTaps) {
  std::mt19937 random(20240611);
  auto pick = [&](std::int64_t low, std::int64_t high) {
    return std::uniform_int_distribution<std::int64_t>(low, high)(random);
  };
  int checked = 0, with_halo = 0, asymmetric = 0, degenerate = 0;
  std::map<LayerKind, int> per_kind;
  for (int attempt = 0; attempt < 20000 && checked < 600; ++attempt) {
    const int which = static_cast<int>(pick(0, 2));
    const LayerKind kind = which == 0   ? LayerKind::convolution
                           : which == 1 ? LayerKind::pooling
                                        : LayerKind::transposed_convolution;
    const std::int64_t parts = pick(2, 8);
    const std::int64_t input = parts * pick(1, 12);
    const std::int64_t kernel = pick(1, 7);
    const std::int64_t stride = pick(1, 3);
    const std::int64_t dilation = kind == LayerKind::pooling ? 1 : pick(1, 3);
    const std::int64_t reach = (kernel - 1) * dilation;
    const std::int64_t padding = kind == LayerKind::pooling ? pick(0, kernel / 2) : pick(0, reach);
    std::int64_t output = 0;
    if (kind == LayerKind::transposed_convolution) {
      output = (input - 1) * stride - 2 * padding + reach + 1;
    } else {
      output = window_output_extent(input, kernel, stride, padding, dilation, false);
    }
    // Only shardable layers: both extents split evenly, as plan_shards requires.
    if (output <= 0 || output % parts != 0) continue;
    const auto expected =
        brute_force_halo(kind, input, output, parts, kernel, stride, padding, dilation);
    const Halo actual = window_halo(kind, input, output, parts, kernel, stride, padding, dilation);
    std::ostringstream what;
    what << to_string(kind) << " input " << input << " output " << output << " parts " << parts
         << " kernel " << kernel << " stride " << stride << " padding " << padding << " dilation "
         << dilation << ": got {" << actual.lower << "," << actual.upper << "}, expected {"
         << expected.halo.lower << "," << expected.halo.upper << "}";
    if (expected.reaches_past_the_volume) ++degenerate;
    EXPECT_EQ(actual, expected.halo) << what.str();
    ++checked;
    ++per_kind[kind];
    with_halo += expected.halo.lower + expected.halo.upper > 0 ? 1 : 0;
    asymmetric += expected.halo.lower != expected.halo.upper ? 1 : 0;
  }
  EXPECT_EQ(checked, 600);
  EXPECT_GE(per_kind[LayerKind::convolution], 100);
  EXPECT_GE(per_kind[LayerKind::pooling], 100);
  EXPECT_GE(per_kind[LayerKind::transposed_convolution], 100);
  EXPECT_GE(with_halo, 200);  // the cases are not all trivial
  EXPECT_GE(asymmetric, 50);
  EXPECT_GT(degenerate, 0);  // the random cases include windows reaching past the volume
}

}  // namespace
}  // namespace tessera
