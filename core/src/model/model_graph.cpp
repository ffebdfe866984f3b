#include "tessera/core/model/model_graph.hpp"

#include <functional>
#include <queue>
#include <unordered_set>

#include "tessera/core/model/layer_kind_rules.hpp"
#include "tessera/core/model/shape_inference.hpp"

namespace tessera {
namespace {

// Kahn's algorithm, taking among ready layers the one listed first: tables then follow the order
// the author wrote (Boost.Graph's DFS-based topological_sort does not preserve it).
std::vector<std::size_t> stable_topological_order(
    const std::vector<Layer>& layers,
    const std::unordered_map<std::string, std::size_t>& index_by_name) {
  std::vector<std::size_t> pending_inputs(layers.size(), 0);
  std::vector<std::vector<std::size_t>> consumers(layers.size());
  for (std::size_t i = 0; i < layers.size(); ++i) {
    for (const auto& input : layers[i].inputs) {
      consumers[index_by_name.at(input)].push_back(i);
      ++pending_inputs[i];
    }
  }
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (pending_inputs[i] == 0) ready.push(i);
  }
  std::vector<std::size_t> order;
  while (!ready.empty()) {
    const auto next = ready.top();
    ready.pop();
    order.push_back(next);
    for (auto consumer : consumers[next]) {
      if (--pending_inputs[consumer] == 0) ready.push(consumer);
    }
  }
  if (order.size() != layers.size()) {
    for (std::size_t i = 0; i < layers.size(); ++i) {
      if (pending_inputs[i] > 0) {
        throw ModelError(layers[i].name, "is part of a cycle: a model must be acyclic");
      }
    }
  }
  return order;
}

}  // namespace

ModelError::ModelError(std::string layer, std::string problem)
    : std::runtime_error("layer '" + layer + "': " + problem),
      layer_(std::move(layer)),
      problem_(std::move(problem)) {}

// A layer that reads an embedding's table (tied weights: another embedding, or a projection as
// a language model's head) needs an owner whose table has its weights' extents and is its own,
// so that the parameters are counted exactly once.
void ModelGraph::check_shared_tables(const ModelGraph& graph) {
  for (const auto& resolved : graph.layers_) {
    const LayerKindRules& rules = rules_of(resolved.layer.kind);
    const std::string owner_name = rules.table_owner(resolved.layer);
    if (owner_name.empty()) continue;
    const auto& name = resolved.layer.name;
    auto owner_index = graph.index_of(owner_name);
    if (!owner_index) {
      throw ModelError(name, "shared_with '" + owner_name + "' is not a layer of this model");
    }
    const ResolvedLayer& owner = graph.layers_[*owner_index];
    if (owner.layer.kind != LayerKind::embedding) {
      throw ModelError(name, "shared_with '" + owner_name + "' is not an embedding");
    }
    if (!rules_of(owner.layer.kind).table_owner(owner.layer).empty()) {
      throw ModelError(name, "shared_with '" + owner_name +
                                 "' shares another table itself; name the table's owner");
    }
    const auto table = rules_of(owner.layer.kind).weight_extents(owner.layer, owner.input_shapes);
    const auto needed = rules.weight_extents(resolved.layer, resolved.input_shapes);
    if (table != needed) {
      throw ModelError(name, "shared_with '" + owner_name + "' has a " +
                                 std::to_string(table.at(0)) + " x " + std::to_string(table.at(1)) +
                                 " table, this one " + std::to_string(needed.at(0)) + " x " +
                                 std::to_string(needed.at(1)));
    }
  }
}

ModelGraph ModelGraph::from_layers(std::string name, std::vector<Layer> layers,
                                   const InputShapeRule& input_shape) {
  if (layers.empty()) throw ModelError("", "a model needs at least one layer");
  std::unordered_map<std::string, std::size_t> index_by_name;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (layers[i].name.empty()) throw ModelError("", "every layer needs a name");
    if (!index_by_name.emplace(layers[i].name, i).second) {
      throw ModelError(layers[i].name, "name is used by more than one layer");
    }
  }
  std::size_t input_count = 0;
  for (const auto& layer : layers) {
    input_count += layer.kind == LayerKind::input ? 1 : 0;
    std::unordered_set<std::string> seen;
    for (const auto& input : layer.inputs) {
      if (!index_by_name.count(input)) {
        throw ModelError(layer.name, "input '" + input + "' is not a layer of this model");
      }
      if (input == layer.name) throw ModelError(layer.name, "a layer cannot feed itself");
      if (!seen.insert(input).second) {
        throw ModelError(layer.name, "input '" + input + "' is listed twice");
      }
    }
    if (layer.kind != LayerKind::input && layer.inputs.empty()) {
      throw ModelError(layer.name, "has no inputs");
    }
  }
  if (input_count != 1) {
    throw ModelError(layers.front().name,
                     "a model needs exactly one input layer, found " + std::to_string(input_count));
  }

  ModelGraph graph;
  graph.name_ = std::move(name);
  for (auto original : stable_topological_order(layers, index_by_name)) {
    ResolvedLayer resolved;
    for (const auto& input : layers[original].inputs) {
      const auto producer = graph.index_by_name_.at(input);
      const auto& produced = graph.layers_[producer].output_shape;
      resolved.input_indices.push_back(producer);
      resolved.input_shapes.push_back(
          input_shape ? input_shape(layers[original], resolved.input_shapes.size(), produced)
                      : produced);
    }
    auto inferred = infer_layer(layers[original], resolved.input_shapes);
    resolved.layer = std::move(inferred.layer);
    resolved.output_shape = inferred.output;
    graph.index_by_name_.emplace(resolved.layer.name, graph.layers_.size());
    graph.layers_.push_back(std::move(resolved));
  }
  check_shared_tables(graph);
  return graph;
}

const ResolvedLayer& ModelGraph::layer(const std::string& name) const {
  auto it = index_by_name_.find(name);
  if (it == index_by_name_.end()) throw ModelError(name, "no such layer in model " + name_);
  return layers_[it->second];
}

std::optional<std::size_t> ModelGraph::index_of(const std::string& name) const {
  auto it = index_by_name_.find(name);
  if (it == index_by_name_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::size_t> ModelGraph::consumers_of(std::size_t index) const {
  std::vector<std::size_t> consumers;
  for (std::size_t i = index + 1; i < layers_.size(); ++i) {
    for (auto input : layers_[i].input_indices) {
      if (input == index) consumers.push_back(i);
    }
  }
  return consumers;
}

}  // namespace tessera
