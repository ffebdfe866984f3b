// Inverted dropout with a counter-based mask (counter_random.hpp): element i keeps its value when
// its draw maps to a uniform >= p. A plain loop: oneDNN 2.6 has no dropout or random-number
// primitive.
#include <bit>
#include <cstddef>
#include <string>

#include "argument_check.hpp"
#include "counter_random.hpp"
#include "cpu/cpu_layer_kernels.hpp"
#include "cpu/dnnl_plain_memory.hpp"

namespace tessera::kernels {

void CpuLayerKernels::dropout_forward(std::int64_t count, float drop_probability,
                                      const DropoutDraw& draw, const float* x, float* mask,
                                      float* y) {
  require_dropout_arguments(count, drop_probability, draw);
  const auto kept_scale_bits = std::bit_cast<std::uint32_t>(1.0f / (1.0f - drop_probability));
  // Compare the top 24 bits (a uniform on [0, 1) with float resolution) against p * 2^24.
  const auto drop_below = static_cast<std::uint64_t>(static_cast<double>(drop_probability) *
                                                     static_cast<double>(1ULL << 24));
  const auto per_sample = static_cast<std::size_t>(draw.per_sample);
  for (std::size_t first = 0; first < static_cast<std::size_t>(count); first += per_sample) {
    const std::uint64_t seed =
        counter_stream_seed(draw.seed, draw.first_sample + first / per_sample);
    for (std::size_t index = 0; index < per_sample; ++index) {
      const std::uint64_t bits = counter_draw24(seed, index);
      // Selected with integer bit masks: the compiler turns any float select into a branch, and
      // a branch on a random draw is mispredicted half the time at p = 0.5
      // (docs/measurements/2026-11-21.md).
      const std::uint32_t keep = 0u - static_cast<std::uint32_t>(bits >= drop_below);
      mask[first + index] = std::bit_cast<float>(keep & kept_scale_bits);
      y[first + index] = x[first + index] * mask[first + index];
    }
  }
}

void CpuLayerKernels::dropout_backward(std::int64_t count, const float* mask, const float* dy,
                                       float* dx) {
  require_argument(count >= 0, "dropout_backward", "element count must be >= 0");
  if (count == 0) return;
  const dnnl::memory::desc desc = plain_desc({count});
  const dnnl::binary::primitive_desc multiply_pd({dnnl::algorithm::binary_mul, desc, desc, desc},
                                                 engine_);
  dnnl::binary(multiply_pd)
      .execute(stream_, {{DNNL_ARG_SRC_0, wrap(desc, engine_, dy)},
                         {DNNL_ARG_SRC_1, wrap(desc, engine_, mask)},
                         {DNNL_ARG_DST, wrap(desc, engine_, dx)}});
  stream_.wait();
}

}  // namespace tessera::kernels
