#include "tessera/core/model/input_gradients.hpp"

#include <algorithm>

namespace tessera {

bool gradient_flows_to(const ModelGraph& model, std::size_t producer) {
  return model.layers().at(producer).layer.kind != LayerKind::input;
}

bool computes_input_gradient(const ModelGraph& model, std::size_t layer) {
  const auto& producers = model.layers().at(layer).input_indices;
  return std::any_of(producers.begin(), producers.end(),
                     [&](std::size_t producer) { return gradient_flows_to(model, producer); });
}

}  // namespace tessera
