#include "tessera/core/common/tensor_shape.hpp"

namespace tessera {

std::int64_t TensorShape::spatial_elements() const {
  std::int64_t product = 1;
  for (auto extent : spatial) product *= extent;
  return product;
}

TensorShape TensorShape::with_batch(std::int64_t batch) const {
  TensorShape copy = *this;
  copy.n = batch;
  return copy;
}

std::string to_string(const TensorShape& shape, bool with_batch) {
  std::string text = with_batch ? std::to_string(shape.n) + "x" : std::string();
  text += std::to_string(shape.c);
  for (auto extent : shape.spatial) text += "x" + std::to_string(extent);
  return text;
}

std::vector<std::string> spatial_axis_names(int rank) {
  static const std::vector<std::string> all{"D", "H", "W"};
  if (rank <= 0) return {};
  if (rank >= 3) return all;
  return std::vector<std::string>(all.end() - rank, all.end());
}

}  // namespace tessera
