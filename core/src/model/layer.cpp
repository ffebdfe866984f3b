#include "tessera/core/layer.hpp"

#include <array>
#include <stdexcept>
#include <utility>

namespace tessera {
namespace {

// The names used in model files, in LayerKind order.
const std::array<std::pair<LayerKind, const char*>, 17> kKindNames{{
    {LayerKind::input, "input"},
    {LayerKind::convolution, "conv"},
    {LayerKind::transposed_convolution, "transposed_conv"},
    {LayerKind::pooling, "pool"},
    {LayerKind::batch_norm, "batch_norm"},
    {LayerKind::relu, "relu"},
    {LayerKind::leaky_relu, "leaky_relu"},
    {LayerKind::dropout, "dropout"},
    {LayerKind::fully_connected, "fully_connected"},
    {LayerKind::concat, "concat"},
    {LayerKind::add, "add"},
    {LayerKind::softmax_cross_entropy, "softmax_cross_entropy"},
    {LayerKind::mse_loss, "mse_loss"},
    {LayerKind::lstm, "lstm"},
    {LayerKind::embedding, "embedding"},
    {LayerKind::attention, "attention"},
    {LayerKind::projection, "projection"},
}};

}  // namespace

std::string to_string(LayerKind kind) {
  for (const auto& [k, name] : kKindNames) {
    if (k == kind) return name;
  }
  return "unknown";
}

bool is_convolution(LayerKind kind) {
  return kind == LayerKind::convolution || kind == LayerKind::transposed_convolution;
}

const std::vector<std::string>& layer_kind_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> list;
    for (const auto& entry : kKindNames) list.emplace_back(entry.second);
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
  return kind == LayerKind::lstm || kind == LayerKind::embedding || kind == LayerKind::attention ||
         kind == LayerKind::projection;
}

bool depends_across_time(LayerKind kind) {
  return kind == LayerKind::lstm || kind == LayerKind::attention;
}

LayerKind layer_kind_from_name(const std::string& name) {
  for (const auto& [kind, text] : kKindNames) {
    if (name == text) return kind;
  }
  throw std::invalid_argument("unknown layer kind " + name);
}

}  // namespace tessera
