#include "tensor_part.hpp"

#include <algorithm>

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

}  // namespace tessera::kernels::real
