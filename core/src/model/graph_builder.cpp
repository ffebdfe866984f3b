#include "tessera/core/model/graph_builder.hpp"

namespace tessera {

std::string GraphBuilder::append(Layer layer) {
  layers_.push_back(std::move(layer));
  return layers_.back().name;
}

std::string GraphBuilder::input(const std::string& name, std::int64_t channels,
                                std::vector<std::int64_t> spatial) {
  return append({name, LayerKind::input, InputParams{channels, std::move(spatial)}, {}});
}

std::string GraphBuilder::conv(const std::string& name, const std::string& from,
                               ConvolutionParams params) {
  return append({name, LayerKind::convolution, std::move(params), {from}});
}

std::string GraphBuilder::transposed_conv(const std::string& name, const std::string& from,
                                          ConvolutionParams params) {
  return append({name, LayerKind::transposed_convolution, std::move(params), {from}});
}

std::string GraphBuilder::pool(const std::string& name, const std::string& from,
                               PoolingParams params) {
  return append({name, LayerKind::pooling, std::move(params), {from}});
}

std::string GraphBuilder::batch_norm(const std::string& name, const std::string& from,
                                     BatchNormParams params) {
  return append({name, LayerKind::batch_norm, params, {from}});
}

std::string GraphBuilder::relu(const std::string& name, const std::string& from) {
  return append({name, LayerKind::relu, NoParams{}, {from}});
}

std::string GraphBuilder::leaky_relu(const std::string& name, const std::string& from,
                                     double slope) {
  return append({name, LayerKind::leaky_relu, LeakyReluParams{slope}, {from}});
}

std::string GraphBuilder::gelu(const std::string& name, const std::string& from,
                               GeluApproximation approximation) {
  return append({name, LayerKind::gelu, GeluParams{approximation}, {from}});
}

std::string GraphBuilder::dropout(const std::string& name, const std::string& from,
                                  double drop_probability) {
  return append({name, LayerKind::dropout, DropoutParams{drop_probability}, {from}});
}

std::string GraphBuilder::fully_connected(const std::string& name, const std::string& from,
                                          std::int64_t out_features, bool bias) {
  return append(
      {name, LayerKind::fully_connected, FullyConnectedParams{out_features, bias}, {from}});
}

std::string GraphBuilder::concat(const std::string& name, const std::vector<std::string>& from) {
  return append({name, LayerKind::concat, NoParams{}, from});
}

std::string GraphBuilder::add(const std::string& name, const std::vector<std::string>& from) {
  return append({name, LayerKind::add, NoParams{}, from});
}

std::string GraphBuilder::softmax_cross_entropy(const std::string& name, const std::string& from) {
  return append({name, LayerKind::softmax_cross_entropy, NoParams{}, {from}});
}

std::string GraphBuilder::mse_loss(const std::string& name, const std::string& from) {
  return append({name, LayerKind::mse_loss, NoParams{}, {from}});
}

std::string GraphBuilder::lstm(const std::string& name, const std::string& from,
                               LstmParams params) {
  return append({name, LayerKind::lstm, params, {from}});
}

std::string GraphBuilder::embedding(const std::string& name, const std::string& from,
                                    EmbeddingParams params) {
  return append({name, LayerKind::embedding, std::move(params), {from}});
}

std::string GraphBuilder::attention(const std::string& name, const std::string& query,
                                    const std::string& memory, AttentionParams params) {
  return append({name, LayerKind::attention, params, {query, memory}});
}

std::string GraphBuilder::projection(const std::string& name, const std::string& from,
                                     ProjectionParams params) {
  return append({name, LayerKind::projection, params, {from}});
}

std::string GraphBuilder::layer_norm(const std::string& name, const std::string& from,
                                     bool affine) {
  return append({name, LayerKind::layer_norm, LayerNormParams{affine}, {from}});
}

std::string GraphBuilder::self_attention(const std::string& name, const std::string& from,
                                         SelfAttentionParams params) {
  return append({name, LayerKind::self_attention, params, {from}});
}

std::string GraphBuilder::position_embedding(const std::string& name, const std::string& from,
                                             std::int64_t positions) {
  return append({name, LayerKind::position_embedding, PositionEmbeddingParams{positions}, {from}});
}

std::string GraphBuilder::conv_bn_relu(const std::string& name, const std::string& from,
                                       ConvolutionParams params, bool with_batch_norm) {
  auto x = conv(name, from, std::move(params));
  if (with_batch_norm) x = batch_norm(name + "_bn", x);
  return relu(name + "_relu", x);
}

ModelGraph GraphBuilder::build() && {
  return ModelGraph::from_layers(std::move(model_name_), std::move(layers_));
}

}  // namespace tessera
