#pragma once
// Helpers of the model zoo's tests (model_zoo_test, recurrent_zoo_test, transformer_zoo_test).
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/common/tensor_shape.hpp"
#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/model/model_graph.hpp"
#include "tessera/core/zoo/model_zoo.hpp"

namespace tessera::test {

using ZooOptions = std::map<std::string, std::string>;

// The parameters of zoo model `model` built with `options`.
inline std::int64_t zoo_params(const std::string& model, const ZooOptions& options = {}) {
  return parameter_count(build_zoo_model(model, options));
}

// One sample's shape: `channels` by `spatial`.
inline TensorShape sample_shape(std::int64_t channels, std::vector<std::int64_t> spatial = {}) {
  return TensorShape{1, channels, std::move(spatial)};
}

inline int count_kind(const ModelGraph& model, LayerKind kind) {
  int count = 0;
  for (const auto& layer : model.layers()) count += layer.layer.kind == kind ? 1 : 0;
  return count;
}

}  // namespace tessera::test
