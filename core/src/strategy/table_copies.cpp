#include "tessera/core/strategy/table_copies.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <utility>

#include "tessera/core/model/layer_kind_rules.hpp"

namespace tessera {

TableCopies table_copies(const ModelGraph& model, const std::vector<int>& stage_of_layer) {
  const auto& layers = model.layers();
  const std::size_t count = layers.size();
  TableCopies copies;
  copies.holder.resize(count);
  std::iota(copies.holder.begin(), copies.holder.end(), std::size_t{0});
  copies.origin = copies.holder;
  copies.stages.resize(count);
  // Per table owner and stage, the reader holding the copy there: the first one met.
  std::map<std::pair<std::size_t, int>, std::size_t> copy_holders;
  for (std::size_t i = 0; i < count; ++i) {
    const auto owner_name = rules_of(layers[i].layer.kind).table_owner(layers[i].layer);
    if (owner_name.empty()) continue;
    const std::size_t owner = model.index_of(owner_name).value();
    const int stage = stage_of_layer.at(i);
    if (stage_of_layer.at(owner) == stage) {
      copies.holder[i] = owner;
      continue;
    }
    const auto [holder, first] = copy_holders.try_emplace({owner, stage}, i);
    copies.holder[i] = holder->second;
    if (!first) continue;
    copies.origin[i] = owner;
    auto& stages = copies.stages[owner];
    if (stages.empty()) stages.push_back(stage_of_layer[owner]);
    stages.insert(std::upper_bound(stages.begin(), stages.end(), stage), stage);
  }
  for (const auto& [table, holder] : copy_holders) {
    copies.stages[holder] = copies.stages[table.first];
  }
  return copies;
}

TableCopies table_copies(const ModelGraph& model, const ShardPlan& plan) {
  std::vector<int> stage_of_layer;
  for (const auto& shard : plan.layers) stage_of_layer.push_back(shard.stage);
  return table_copies(model, stage_of_layer);
}

std::vector<bool> tables_written_early(const TableCopies& copies, const ShardPlan& plan,
                                       int stage) {
  std::vector<bool> early(copies.holder.size(), false);
  for (std::size_t i = 0; i < copies.holder.size(); ++i) {
    // A holder is on its readers' stage (a table's copy is held where it is read).
    if (plan.layers[i].stage == stage && copies.holder[i] < i) early[copies.holder[i]] = true;
  }
  return early;
}

}  // namespace tessera
