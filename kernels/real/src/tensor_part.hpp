#pragma once
// A rank's part of a layer split over the tensor group (tensor_split.hpp), and the part of a
// whole layer's weight matrix it holds: out x in values (a projection's or fully connected
// layer's, a convolution's filters as out channels x (in channels x window)) and a bias of out.
// A column split holds rows (its output channels) and their bias; a row split columns (its
// input channels) and the whole bias, which only the group's first rank adds, since the outputs
// are partial sums the group's all-reduce adds.
#include <algorithm>
#include <cstdint>
#include <span>

#include "tessera/core/model/tensor_role.hpp"

namespace tessera::kernels::real {

struct TensorPart {
  TensorSplit split = TensorSplit::replicated;
  std::int64_t index = 0;
  std::int64_t parts = 1;
  // Of a vocabulary split: the whole vocabulary, which the parts' equal shares may pass (the last
  // parts' rows past it padding, LayerTensorSplit::whole_vocabulary).
  std::int64_t vocabulary = 0;
  // Of a vocabulary split shared `share` rows (classes) a part: the first one here, and how many
  // of them are not padding.
  std::int64_t first_row(std::int64_t share) const { return share * index; }
  std::int64_t rows_held(std::int64_t share) const {
    return std::clamp<std::int64_t>(vocabulary - first_row(share), 0, share);
  }
  // A partial sum's bias is added by one GPU of the group only.
  bool adds_bias() const { return index == 0; }
  // Whether a matrix product's bias is added here (every rank but under a row split).
  bool adds_product_bias() const { return split != TensorSplit::row || adds_bias(); }
  // The whole layer's inputs and outputs from this part's (`in` and `out`).
  std::int64_t whole_in(std::int64_t in) const {
    return split == TensorSplit::row ? in * parts : in;
  }
  std::int64_t whole_out(std::int64_t out) const {
    return split == TensorSplit::column ? out * parts : out;
  }
};

// `values`: this part's out x in matrix and (`bias`) its out biases, taken from the whole
// layer's (whole_out x whole_in, then whole_out biases).
void take_matrix_part(const TensorPart& part, std::int64_t in, std::int64_t out, bool bias,
                      std::span<const float> whole, std::span<float> values);

// PyTorch's Linear initialisation of this part: the whole layer's weights and biases alike
// uniform within 1/sqrt(its fan-in), drawn from `seed`, and this part of them taken.
void linear_initial_part(const TensorPart& part, std::int64_t in, std::int64_t out, bool bias,
                         std::uint64_t seed, std::span<float> values);

}  // namespace tessera::kernels::real
