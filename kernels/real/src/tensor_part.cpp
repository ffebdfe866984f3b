#include "tensor_part.hpp"

#include <algorithm>
#include <cmath>

#include "layer_executor.hpp"

namespace tessera::kernels::real {

void take_matrix_part(const TensorPart& part, std::int64_t in, std::int64_t out, bool bias,
                      std::span<const float> whole, std::span<float> values) {
  const std::int64_t whole_in = part.whole_in(in), whole_out = part.whole_out(out);
  const std::int64_t first_in = part.split == TensorSplit::row ? in * part.index : 0;
  const std::int64_t first_out = part.split == TensorSplit::column ? out * part.index : 0;
  auto next = values.begin();
  for (std::int64_t o = 0; o < out; ++o) {
    next = std::copy_n(whole.begin() + (first_out + o) * whole_in + first_in, in, next);
  }
  if (bias) std::copy_n(whole.begin() + whole_in * whole_out + first_out, out, next);
}

void linear_initial_part(const TensorPart& part, std::int64_t in, std::int64_t out, bool bias,
                         std::uint64_t seed, std::span<float> values) {
  const std::int64_t whole_in = part.whole_in(in), whole_out = part.whole_out(out);
  const auto bound = static_cast<float>(1.0 / std::sqrt(static_cast<double>(whole_in)));
  const auto whole = uniform_values(seed, 0, bound, whole_in * whole_out + (bias ? whole_out : 0));
  take_matrix_part(part, in, out, bias, whole, values);
}

}  // namespace tessera::kernels::real
