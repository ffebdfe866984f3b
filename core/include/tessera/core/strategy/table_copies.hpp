#pragma once
// Tied tables over pipeline stages, as Megatron-LM keeps a GPT's word embeddings: a layer that
// reads an embedding's table (LayerKindRules::table_owner: a language model's head, a shared
// embedding) on a stage other than the owner's works on a copy of the table held on its own
// stage. The copies start equal (the owner's initial values); after the data-parallel all-reduce
// the stages holding the table sum their gradients (a group all-reduce over those stages), so
// that every copy takes the same update. Memory counts the copy on its stage.
#include <cstddef>
#include <vector>

#include "tessera/core/model/model_graph.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"

namespace tessera {

struct TableCopies {
  // Per layer, the layer whose parameters it works on: itself; its table's owner where that is
  // on its stage; or the first reader of the table on its stage, which holds the copy there.
  std::vector<std::size_t> holder;
  // Per layer, the layer whose initial values its parameters take: its table's owner for a
  // copy, itself otherwise.
  std::vector<std::size_t> origin;
  // Per holder of a table that has copies (the owner and each copy's holder): the stages holding
  // one, ascending; empty for every other layer.
  std::vector<std::vector<int>> stages;

  bool holds_copy(std::size_t layer) const { return origin.at(layer) != layer; }
};

// `stage_of_layer`: each layer's model-parallel stage.
TableCopies table_copies(const ModelGraph& model, const std::vector<int>& stage_of_layer);
TableCopies table_copies(const ModelGraph& model, const ShardPlan& plan);

// Per layer: a later layer of `stage` reads its table, so backward writes the table's gradients
// before the table's own backward does (a GPT's head, its token embedding's).
std::vector<bool> tables_written_early(const TableCopies& copies, const ShardPlan& plan, int stage);

}  // namespace tessera
