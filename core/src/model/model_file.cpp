#include "tessera/core/model_file.hpp"

#include <map>

namespace tessera {
namespace {

const std::vector<std::string> kCommonKeys{"name", "op", "inputs"};

std::vector<std::string> keys_for(LayerKind kind) {
  std::vector<std::string> extra;
  switch (kind) {
    case LayerKind::input:
      extra = {"shape"};
      break;
    case LayerKind::convolution:
    case LayerKind::transposed_convolution:
      extra = {"out_channels", "kernel", "stride", "padding", "dilation", "groups", "bias"};
      if (kind == LayerKind::transposed_convolution) extra.push_back("output_padding");
      break;
    case LayerKind::pooling:
      extra = {"mode", "kernel", "stride", "padding", "ceil_mode", "global"};
      break;
    case LayerKind::batch_norm:
      extra = {"affine", "global_statistics"};
      break;
    case LayerKind::leaky_relu:
      extra = {"negative_slope"};
      break;
    case LayerKind::dropout:
      extra = {"drop_probability"};
      break;
    case LayerKind::fully_connected:
      extra = {"out_features", "bias"};
      break;
    case LayerKind::lstm:
      extra = {"hidden", "projection", "bidirectional", "bias"};
      break;
    case LayerKind::embedding:
      extra = {"vocabulary", "dimension", "channel", "shared_with"};
      break;
    case LayerKind::attention:
      extra = {"units", "normalize"};
      break;
    case LayerKind::projection:
      extra = {"out_features", "bias", "sampled"};
      break;
    default:
      break;
  }
  auto keys = kCommonKeys;
  keys.insert(keys.end(), extra.begin(), extra.end());
  return keys;
}

AxisValues axis_values(const YamlMap& map, const std::string& key, AxisValues fallback,
                       std::int64_t minimum) {
  auto value = map.optional(key);
  if (!value) return fallback;
  constexpr std::int64_t kMaxWindow = 4096;  // kernels, strides, paddings, dilations
  if (value->is_sequence()) return value->as_integer_list(1, 3, minimum, kMaxWindow);
  return {value->as_integer(minimum, kMaxWindow)};
}

// Widths of recurrent layers and vocabularies: 2^20 units, 2^24 tokens (LM1B has 793,471).
constexpr std::int64_t kMaxUnits = 1 << 20;
constexpr std::int64_t kMaxVocabulary = 1 << 24;

LayerParams parse_sequence_params(LayerKind kind, const YamlMap& map) {
  switch (kind) {
    case LayerKind::lstm: {
      LstmParams p;
      p.hidden = map.required("hidden", "the LSTM's cell units").as_integer(1, kMaxUnits);
      if (auto projection = map.optional("projection")) {
        p.projection = projection->as_integer(0, kMaxUnits);
      }
      if (auto bidirectional = map.optional("bidirectional")) {
        p.bidirectional = bidirectional->as_bool();
      }
      if (auto bias = map.optional("bias")) {
        const auto choice = bias->as_choice({"none", "single", "double"});
        p.bias = choice == "none"     ? LstmBias::none
                 : choice == "single" ? LstmBias::single
                                      : LstmBias::double_;
      }
      return p;
    }
    case LayerKind::embedding: {
      EmbeddingParams p;
      p.vocabulary =
          map.required("vocabulary", "the number of tokens").as_integer(1, kMaxVocabulary);
      p.dimension = map.required("dimension", "the embedding's width").as_integer(1, kMaxUnits);
      if (auto channel = map.optional("channel")) p.channel = channel->as_integer(0, 1 << 20);
      if (auto shared = map.optional("shared_with")) p.shared_with = shared->as_string();
      return p;
    }
    case LayerKind::attention: {
      AttentionParams p;
      p.units = map.required("units", "a positive integer").as_integer(1, kMaxUnits);
      if (auto normalize = map.optional("normalize")) p.normalize = normalize->as_bool();
      return p;
    }
    default: {
      ProjectionParams p;
      p.out_features =
          map.required("out_features", "a positive integer").as_integer(1, kMaxVocabulary);
      if (auto bias = map.optional("bias")) p.bias = bias->as_bool();
      if (auto sampled = map.optional("sampled")) {
        p.sampled = sampled->as_integer(0, kMaxVocabulary);
      }
      return p;
    }
  }
}

LayerParams parse_params(LayerKind kind, const YamlMap& map) {
  switch (kind) {
    case LayerKind::input:
      return InputParams{.channels = 0, .spatial = {}};
    case LayerKind::convolution:
    case LayerKind::transposed_convolution: {
      ConvolutionParams p;
      p.out_channels = map.required("out_channels", "a positive integer").as_integer(1, 1 << 20);
      p.kernel = axis_values(map, "kernel", {1}, 1);
      p.stride = axis_values(map, "stride", {1}, 1);
      p.padding = axis_values(map, "padding", {0}, 0);
      p.dilation = axis_values(map, "dilation", {1}, 1);
      p.output_padding = axis_values(map, "output_padding", {0}, 0);
      if (auto groups = map.optional("groups")) p.groups = groups->as_integer(1, 1 << 20);
      if (auto bias = map.optional("bias")) p.bias = bias->as_bool();
      return p;
    }
    case LayerKind::pooling: {
      PoolingParams p;
      auto mode = map.required("mode", "max or average").as_choice({"max", "average"});
      p.mode = mode == "max" ? PoolMode::max : PoolMode::average;
      if (auto global = map.optional("global")) p.global = global->as_bool();
      p.kernel = axis_values(map, "kernel", {2}, 1);
      p.stride = axis_values(map, "stride", p.kernel, 1);
      p.padding = axis_values(map, "padding", {0}, 0);
      if (auto ceil = map.optional("ceil_mode")) p.ceil_mode = ceil->as_bool();
      return p;
    }
    case LayerKind::batch_norm: {
      BatchNormParams p;
      if (auto affine = map.optional("affine")) p.affine = affine->as_bool();
      if (auto global = map.optional("global_statistics")) p.global_statistics = global->as_bool();
      return p;
    }
    case LayerKind::leaky_relu: {
      LeakyReluParams p;
      if (auto slope = map.optional("negative_slope")) p.negative_slope = slope->as_number(0, 1e6);
      return p;
    }
    case LayerKind::dropout: {
      DropoutParams p;
      if (auto drop = map.optional("drop_probability")) {
        p.drop_probability = drop->as_number(0, 0.999999);
      }
      return p;
    }
    case LayerKind::fully_connected: {
      FullyConnectedParams p;
      p.out_features = map.required("out_features", "a positive integer").as_integer(1, 1 << 24);
      if (auto bias = map.optional("bias")) p.bias = bias->as_bool();
      return p;
    }
    case LayerKind::lstm:
    case LayerKind::embedding:
    case LayerKind::attention:
    case LayerKind::projection:
      return parse_sequence_params(kind, map);
    default:
      return NoParams{};
  }
}

}  // namespace

ModelGraph parse_model_file(const YamlValue& root) {
  YamlMap top(root, {"name", "description", "mini_batch", "layers"});
  const auto name = top.required("name", "the model's name").as_string();
  std::optional<std::int64_t> mini_batch;
  if (auto batch = top.optional("mini_batch")) mini_batch = batch->as_integer(1, 1 << 24);
  auto layer_list = top.required("layers", "a list of layers");
  std::vector<Layer> layers;
  std::map<std::string, SourceLocation> where;
  std::map<std::string, std::string> key_of;
  for (const auto& item : layer_list.as_sequence(1)) {
    if (!item.is_map()) item.fail("a mapping with name, op and the op's keys");
    // First read only the op, to know which keys this layer may have.
    YamlMap probe(item, {"name",
                         "op",
                         "inputs",
                         "shape",
                         "out_channels",
                         "kernel",
                         "stride",
                         "padding",
                         "dilation",
                         "groups",
                         "bias",
                         "output_padding",
                         "mode",
                         "ceil_mode",
                         "global",
                         "affine",
                         "global_statistics",
                         "negative_slope",
                         "drop_probability",
                         "out_features",
                         "hidden",
                         "projection",
                         "bidirectional",
                         "vocabulary",
                         "dimension",
                         "channel",
                         "shared_with",
                         "units",
                         "normalize",
                         "sampled"});
    auto op_value = probe.required("op", "one of the layer kinds");
    const auto kind = layer_kind_from_name(op_value.as_choice(layer_kind_names()));
    YamlMap map(item, keys_for(kind));
    Layer layer;
    layer.name = map.required("name", "a unique layer name").as_string();
    layer.kind = kind;
    layer.params = parse_params(kind, map);
    if (kind == LayerKind::input) {
      auto shape = map.required("shape", "[channels, (D,) H, W] of one sample");
      auto extents = shape.as_integer_list(2, 4, 1, 1 << 24);
      layer.params = InputParams{extents.front(), {extents.begin() + 1, extents.end()}};
      if (map.has("inputs"))
        map.required("inputs", "").fail_problem("an input layer has no inputs");
    } else if (auto inputs = map.optional("inputs")) {
      if (inputs->is_scalar()) {
        layer.inputs.push_back(inputs->as_string());
      } else {
        for (const auto& input : inputs->as_sequence(1)) layer.inputs.push_back(input.as_string());
      }
    } else if (!layers.empty()) {
      layer.inputs.push_back(layers.back().name);
    }
    if (where.count(layer.name)) {
      throw InputError(item.location(), item.key_path() + ".name",
                       "layer name '" + layer.name + "' is already used");
    }
    where[layer.name] = item.location();
    key_of[layer.name] = item.key_path();
    layers.push_back(std::move(layer));
  }
  try {
    auto graph = ModelGraph::from_layers(name, std::move(layers));
    if (mini_batch) graph.set_default_mini_batch(*mini_batch);
    return graph;
  } catch (const ModelError& error) {
    auto it = where.find(error.layer());
    const SourceLocation location = it != where.end() ? it->second : root.location();
    const std::string key = it != where.end() ? key_of[error.layer()] : "layers";
    throw InputError(location, key, "layer '" + error.layer() + "': " + error.problem());
  }
}

ModelGraph load_model_file(const std::string& path) {
  return parse_model_file(load_yaml_file(path));
}

}  // namespace tessera
