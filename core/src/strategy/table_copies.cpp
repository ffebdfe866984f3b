#include "tessera/core/strategy/table_copies.hpp"

#include <algorithm>

#include "tessera/core/model/layer_kind_rules.hpp"

namespace tessera {

TableCopies table_copies(const ModelGraph& model, const std::vector<int>& stage_of_layer) {
  const auto& layers = model.layers();
  const std::size_t count = layers.size();
  TableCopies copies;
  copies.holder.resize(count);
  copies.origin.resize(count);
  copies.stages.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    copies.holder[i] = i;
    copies.origin[i] = i;
    const auto owner_name = rules_of(layers[i].layer.kind).table_owner(layers[i].layer);
    if (owner_name.empty()) continue;
    const std::size_t owner = model.index_of(owner_name).value();
    const int stage = stage_of_layer.at(i);
    if (stage_of_layer.at(owner) == stage) {
      copies.holder[i] = owner;
      continue;
    }
    // The first reader on this stage holds the copy; later ones read it.
    for (std::size_t j = 0; j <= i; ++j) {
      if (stage_of_layer[j] != stage || j == owner) continue;
      const auto other = rules_of(layers[j].layer.kind).table_owner(layers[j].layer);
      if (other == owner_name) {
        copies.holder[i] = j;
        break;
      }
    }
    if (copies.holder[i] != i) continue;
    copies.origin[i] = owner;
    auto& stages = copies.stages[owner];
    if (stages.empty()) stages.push_back(stage_of_layer[owner]);
    stages.push_back(stage);
  }
  for (std::size_t i = 0; i < count; ++i) {
    auto& owned = copies.stages[i];
    std::sort(owned.begin(), owned.end());
  }
  for (std::size_t i = 0; i < count; ++i) {
    if (copies.holds_copy(i)) copies.stages[i] = copies.stages[copies.origin[i]];
  }
  return copies;
}

TableCopies table_copies(const ModelGraph& model, const ShardPlan& plan) {
  std::vector<int> stage_of_layer;
  for (const auto& shard : plan.layers) stage_of_layer.push_back(shard.stage);
  return table_copies(model, stage_of_layer);
}

}  // namespace tessera
