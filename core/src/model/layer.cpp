#include "tessera/core/model/layer.hpp"

#include <stdexcept>

#include "tessera/core/model/layer_kind_rules.hpp"

namespace tessera {

std::string to_string(LayerKind kind) {
  for (const auto& entry : layer_kinds()) {
    if (entry.kind == kind) return entry.model_file_name;
  }
  return "unknown";
}

bool is_convolution(LayerKind kind) {
  return kind == LayerKind::convolution || kind == LayerKind::transposed_convolution;
}

const std::vector<std::string>& layer_kind_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list;
    for (const auto& entry : layer_kinds()) list.emplace_back(entry.model_file_name);
    return list;
  }();
  return names;
}

std::string to_string(LstmBias bias) {
  switch (bias) {
    case LstmBias::none:
      return "none";
    case LstmBias::single:
      return "single";
    case LstmBias::double_:
      return "double";
  }
  return "double";
}

bool is_sequence_kind(LayerKind kind) {
  return rules_of(kind).is_sequence();
}

bool depends_across_time(LayerKind kind) {
  return rules_of(kind).depends_across_time();
}

LayerKind layer_kind_from_name(const std::string& name) {
  for (const auto& entry : layer_kinds()) {
    if (name == entry.model_file_name) return entry.kind;
  }
  throw std::invalid_argument("unknown layer kind " + name);
}

}  // namespace tessera
