#include "tessera/core/model_json.hpp"

#include "tessera/core/layer_cost.hpp"

namespace tessera {
namespace {

nlohmann::json shape_json(const TensorShape& shape) {
  return {{"channels", shape.c}, {"spatial", shape.spatial}};
}

nlohmann::json params_json(const LayerParams& params) {
  return std::visit(
      [](const auto& p) -> nlohmann::json {
        using T = std::decay_t<decltype(p)>;
        if constexpr (std::is_same_v<T, ConvolutionParams>) {
          return {{"out_channels", p.out_channels},
                  {"kernel", p.kernel},
                  {"stride", p.stride},
                  {"padding", p.padding},
                  {"dilation", p.dilation},
                  {"output_padding", p.output_padding},
                  {"groups", p.groups},
                  {"bias", p.bias}};
        } else if constexpr (std::is_same_v<T, PoolingParams>) {
          return {{"mode", p.mode == PoolMode::max ? "max" : "average"},
                  {"kernel", p.kernel},
                  {"stride", p.stride},
                  {"padding", p.padding},
                  {"ceil_mode", p.ceil_mode},
                  {"global", p.global},
                  {"adaptive_output", p.adaptive_output}};
        } else if constexpr (std::is_same_v<T, BatchNormParams>) {
          return {{"affine", p.affine}, {"global_statistics", p.global_statistics}};
        } else if constexpr (std::is_same_v<T, LeakyReluParams>) {
          return {{"negative_slope", p.negative_slope}};
        } else if constexpr (std::is_same_v<T, DropoutParams>) {
          return {{"drop_probability", p.drop_probability}};
        } else if constexpr (std::is_same_v<T, FullyConnectedParams>) {
          return {{"out_features", p.out_features}, {"bias", p.bias}};
        } else if constexpr (std::is_same_v<T, LstmParams>) {
          return {{"hidden", p.hidden},
                  {"projection", p.projection},
                  {"bidirectional", p.bidirectional},
                  {"bias", to_string(p.bias)}};
        } else if constexpr (std::is_same_v<T, EmbeddingParams>) {
          return {{"vocabulary", p.vocabulary},
                  {"dimension", p.dimension},
                  {"channel", p.channel},
                  {"shared_with", p.shared_with}};
        } else if constexpr (std::is_same_v<T, AttentionParams>) {
          return {{"units", p.units}, {"normalize", p.normalize}};
        } else if constexpr (std::is_same_v<T, ProjectionParams>) {
          return {{"out_features", p.out_features}, {"bias", p.bias}, {"sampled", p.sampled}};
        } else {
          return nlohmann::json::object();
        }
      },
      params);
}

}  // namespace

nlohmann::json to_json(const ModelGraph& model) {
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& layer : model.layers()) {
    nlohmann::json inputs = nlohmann::json::array();
    for (const auto& shape : layer.input_shapes) inputs.push_back(shape_json(shape));
    layers.push_back({{"name", layer.layer.name},
                      {"op", to_string(layer.layer.kind)},
                      {"params", params_json(layer.layer.params)},
                      {"inputs", layer.layer.inputs},
                      {"input_shapes", inputs},
                      {"output_shape", shape_json(layer.output_shape)},
                      {"parameters", parameter_count(layer)}});
  }
  return {{"name", model.name()}, {"parameters", parameter_count(model)}, {"layers", layers}};
}

}  // namespace tessera
