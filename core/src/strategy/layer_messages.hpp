#pragma once
// The messages a layer's passes exchange beyond its own GPU, as step ops, from the shard plan:
// the tensor group's gathers and partial sums (tensor_split.hpp), the spatial group's
// redistribution before the first unsplit layer, and the tensors between model-parallel stages.
// The program writer (step_program.cpp) says when each runs; these say what it is.
#include <cstddef>
#include <vector>

#include "tessera/core/model/model_graph.hpp"
#include "tessera/core/strategy/step_program.hpp"

namespace tessera {

struct LayerMessages {
  const ModelGraph& model;
  const ShardPlan& plan;  // one micro-batch's shards
  int stage = 0;
  DType dtype = DType::float32;

  // Tensor group, before forward: the split inputs the layer needs whole.
  std::vector<StepOp> gathered_inputs(std::size_t layer) const;
  // Tensor group, after forward: partial sums of the output (row, heads, an embedding's rows),
  // or a split loss's per-position sums.
  std::vector<StepOp> reduced_output(std::size_t layer) const;
  // Tensor group, after backward-data: partial sums of the input gradient (column, heads).
  std::vector<StepOp> reduced_input_gradient(std::size_t layer) const;

  // Spatial group: the all-to-all before the first unsplit layer (forward), or back (backward).
  std::vector<StepOp> redistribution(std::size_t layer, Direction direction) const;

  // Stages: before forward, the inputs other stages produce; after it, the output to the stages
  // reading it; before backward, the output's gradient from them; after it, the inputs'
  // gradients to their producers' stages.
  std::vector<StepOp> received_inputs(std::size_t layer) const;
  std::vector<StepOp> sent_output(std::size_t layer) const;
  std::vector<StepOp> received_output_gradients(std::size_t layer) const;
  std::vector<StepOp> sent_input_gradients(std::size_t layer) const;

 private:
  std::vector<int> reader_stages(std::size_t tensor) const;
  bool first_reader_here(std::size_t tensor, std::size_t layer) const;
  StepOp stage_message(StepOpKind kind, std::size_t tensor, Direction direction, int peer) const;
  StepOp tensor_collective(std::size_t layer, StepOpKind kind, Direction direction, double bytes,
                           const std::string& what) const;
};

}  // namespace tessera
