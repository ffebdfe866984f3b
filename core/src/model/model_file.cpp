#include "tessera/core/model/model_file.hpp"

#include <algorithm>
#include <map>

#include "tessera/core/common/yaml_reader.hpp"
#include "tessera/core/model/layer_kind_rules.hpp"

namespace tessera {
namespace {

const std::vector<std::string> kCommonKeys{"name", "op", "inputs"};

// Every key some kind may have: the first reading of a layer accepts these, to learn its op.
std::vector<std::string> keys_of_any_kind() {
  std::vector<std::string> keys = kCommonKeys;
  for (const auto& entry : layer_kinds()) {
    for (auto& key : entry.rules->model_file_keys()) {
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(std::move(key));
    }
  }
  return keys;
}

std::vector<std::string> keys_for(LayerKind kind) {
  auto keys = kCommonKeys;
  const auto extra = rules_of(kind).model_file_keys();
  keys.insert(keys.end(), extra.begin(), extra.end());
  return keys;
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
    static const std::vector<std::string> any_kind_keys = keys_of_any_kind();
    YamlMap probe(item, any_kind_keys);
    auto op_value = probe.required("op", "one of the layer kinds");
    const auto kind = layer_kind_from_name(op_value.as_choice(layer_kind_names()));
    YamlMap map(item, keys_for(kind));
    Layer layer;
    layer.name = map.required("name", "a unique layer name").as_string();
    layer.kind = kind;
    layer.params = rules_of(kind).parse(map);
    // An input reads the data set (its rules refuse `inputs`); another layer with no `inputs`
    // reads the layer before it.
    if (auto inputs = map.optional("inputs"); inputs && kind != LayerKind::input) {
      if (inputs->is_scalar()) {
        layer.inputs.push_back(inputs->as_string());
      } else {
        for (const auto& input : inputs->as_sequence(1)) layer.inputs.push_back(input.as_string());
      }
    } else if (kind != LayerKind::input && !layers.empty()) {
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
