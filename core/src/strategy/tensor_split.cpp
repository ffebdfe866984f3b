#include "tessera/core/strategy/tensor_split.hpp"

#include <algorithm>

#include "tessera/core/model/layer_kind_rules.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"

namespace tessera {

bool LayerTensorSplit::reduces_output() const {
  return split == TensorSplit::row || split == TensorSplit::heads ||
         (split == TensorSplit::vocabulary && !output_split);
}

bool LayerTensorSplit::reduces_input_gradient() const {
  return split == TensorSplit::column || split == TensorSplit::heads;
}

bool LayerTensorSplit::reduces_class_sums() const {
  return split == TensorSplit::vocabulary && output_split;
}

namespace {

// The split a layer takes from its role and which of its inputs arrive split.
TensorSplit split_of(TensorRole role, const std::vector<bool>& split_inputs) {
  const bool all_split =
      !split_inputs.empty() &&
      std::all_of(split_inputs.begin(), split_inputs.end(), [](bool split) { return split; });
  switch (role) {
    case TensorRole::matrix_product:
      return all_split ? TensorSplit::row : TensorSplit::column;
    case TensorRole::channel_wise:
      return all_split ? TensorSplit::follows : TensorSplit::replicated;
    case TensorRole::heads:
      return TensorSplit::heads;
    case TensorRole::table:
      return TensorSplit::vocabulary;
    case TensorRole::class_loss:
      return all_split ? TensorSplit::vocabulary : TensorSplit::replicated;
    case TensorRole::whole:
      return TensorSplit::replicated;
  }
  return TensorSplit::replicated;
}

// Whether the split runs on its inputs as they come split, or needs them whole.
bool takes_split_inputs(TensorSplit split) {
  return split == TensorSplit::row || split == TensorSplit::follows ||
         split == TensorSplit::vocabulary;
}

bool splits_output(TensorSplit split, TensorRole role) {
  return split == TensorSplit::column || split == TensorSplit::follows ||
         (split == TensorSplit::vocabulary && role == TensorRole::class_loss);
}

// The count a split divides, where it must divide evenly.
void check_divides(const ResolvedLayer& layer, const LayerKindRules& rules, TensorSplit split,
                   std::int64_t parts) {
  // A table's rows split unevenly; a loss's classes come split as its logits are.
  if (split != TensorSplit::column && split != TensorSplit::heads) return;
  if (rules.splits_unevenly(layer.layer)) return;
  const std::int64_t extent = rules.tensor_split_extent(layer.layer, split, layer.output_shape);
  if (extent % parts == 0) return;
  const std::string what = split == TensorSplit::heads ? "heads" : "output channels";
  throw StrategyError("parallelism.tensor",
                      "layer '" + layer.layer.name + "' (" + to_string(layer.layer.kind) +
                          ") splits its " + what + " (" + std::to_string(extent) +
                          ") over the tensor group; expected a tensor degree dividing " +
                          std::to_string(extent) + ", got " + std::to_string(parts));
}

}  // namespace

std::vector<LayerTensorSplit> plan_tensor_splits(const ModelGraph& model, std::int64_t parts) {
  const auto& layers = model.layers();
  std::vector<LayerTensorSplit> plan(layers.size());
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto& layer = layers[i];
    auto& entry = plan[i];
    entry.local_layer = layer.layer;
    entry.gathered_inputs.assign(layer.input_indices.size(), false);
    if (parts <= 1) continue;
    std::vector<bool> split_inputs;
    for (auto producer : layer.input_indices) split_inputs.push_back(plan[producer].output_split);
    const auto& rules = rules_of(layer.layer.kind);
    const TensorRole role = rules.tensor_role(layer.layer);
    entry.split = split_of(role, split_inputs);
    if (!takes_split_inputs(entry.split)) entry.gathered_inputs = split_inputs;
    entry.output_split = splits_output(entry.split, role);
    check_divides(layer, rules, entry.split, parts);
    if (entry.split == TensorSplit::vocabulary) {
      // A loss's classes come split as its logits are.
      entry.whole_vocabulary =
          role == TensorRole::class_loss
              ? layer.input_shapes.at(0).c
              : rules.tensor_split_extent(layer.layer, entry.split, layer.output_shape);
    }
    rules.split_for_tensor(entry.local_layer, entry.split, parts);
  }
  return plan;
}

ModelGraph tensor_local_model(const ModelGraph& model,
                              const std::vector<LayerTensorSplit>& splits) {
  std::vector<Layer> layers;
  layers.reserve(splits.size());
  for (const auto& split : splits) layers.push_back(split.local_layer);
  // A gathered input arrives whole.
  const auto whole_where_gathered = [&](const Layer& layer, std::size_t input,
                                        const TensorShape& produced) {
    const auto i = *model.index_of(layer.name);
    return splits[i].gathered_inputs.at(input) ? model.layers()[i].input_shapes.at(input)
                                               : produced;
  };
  return ModelGraph::from_layers(model.name(), std::move(layers), whole_where_gathered);
}

}  // namespace tessera
