// The registry of layer kinds: each kind's model-file name and rules, once. A new kind is a line
// here, its rules file beside this one, and its value in LayerKind.
#include <stdexcept>

#include "tessera/core/model/layer_kind_rules.hpp"

namespace tessera {
namespace kinds {

const LayerKindRules& input_rules();
const LayerKindRules& convolution_rules();
const LayerKindRules& transposed_convolution_rules();
const LayerKindRules& pooling_rules();
const LayerKindRules& batch_norm_rules();
const LayerKindRules& relu_rules();
const LayerKindRules& leaky_relu_rules();
const LayerKindRules& dropout_rules();
const LayerKindRules& fully_connected_rules();
const LayerKindRules& concat_rules();
const LayerKindRules& add_rules();
const LayerKindRules& softmax_cross_entropy_rules();
const LayerKindRules& mse_loss_rules();
const LayerKindRules& lstm_rules();
const LayerKindRules& embedding_rules();
const LayerKindRules& attention_rules();
const LayerKindRules& projection_rules();
const LayerKindRules& gelu_rules();
const LayerKindRules& layer_norm_rules();
const LayerKindRules& self_attention_rules();
const LayerKindRules& position_embedding_rules();

}  // namespace kinds

const std::vector<LayerKindEntry>& layer_kinds() {
  static const std::vector<LayerKindEntry> entries{
      {LayerKind::input, "input", &kinds::input_rules()},
      {LayerKind::convolution, "conv", &kinds::convolution_rules()},
      {LayerKind::transposed_convolution, "transposed_conv",
       &kinds::transposed_convolution_rules()},
      {LayerKind::pooling, "pool", &kinds::pooling_rules()},
      {LayerKind::batch_norm, "batch_norm", &kinds::batch_norm_rules()},
      {LayerKind::relu, "relu", &kinds::relu_rules()},
      {LayerKind::leaky_relu, "leaky_relu", &kinds::leaky_relu_rules()},
      {LayerKind::dropout, "dropout", &kinds::dropout_rules()},
      {LayerKind::fully_connected, "fully_connected", &kinds::fully_connected_rules()},
      {LayerKind::concat, "concat", &kinds::concat_rules()},
      {LayerKind::add, "add", &kinds::add_rules()},
      {LayerKind::softmax_cross_entropy, "softmax_cross_entropy",
       &kinds::softmax_cross_entropy_rules()},
      {LayerKind::mse_loss, "mse_loss", &kinds::mse_loss_rules()},
      {LayerKind::lstm, "lstm", &kinds::lstm_rules()},
      {LayerKind::embedding, "embedding", &kinds::embedding_rules()},
      {LayerKind::attention, "attention", &kinds::attention_rules()},
      {LayerKind::projection, "projection", &kinds::projection_rules()},
      {LayerKind::gelu, "gelu", &kinds::gelu_rules()},
      {LayerKind::layer_norm, "layer_norm", &kinds::layer_norm_rules()},
      {LayerKind::self_attention, "self_attention", &kinds::self_attention_rules()},
      {LayerKind::position_embedding, "position_embedding", &kinds::position_embedding_rules()},
  };
  return entries;
}

const LayerKindRules& rules_of(LayerKind kind) {
  const auto& entries = layer_kinds();
  const auto index = static_cast<std::size_t>(kind);
  if (index < entries.size() && entries[index].kind == kind) return *entries[index].rules;
  throw std::logic_error("layer kind " + std::to_string(index) + " has no rules registered");
}

}  // namespace tessera
