#include "layer_messages.hpp"

#include <algorithm>

#include "tessera/core/model/input_gradients.hpp"

namespace tessera {
namespace {

// A loss over classes split by class sums, per position, the largest logit, the sum of
// exponentials and the target's logit over the tensor group (Megatron's vocabulary-parallel
// cross-entropy).
constexpr double kClassSumsPerPosition = 3;

double tensor_bytes(const TensorShape& local, DType dtype) {
  return static_cast<double>(local.elements() * dtype_bytes(dtype));
}

}  // namespace

// Blocking on the compute stream, as Megatron's are.
StepOp LayerMessages::tensor_collective(std::size_t layer, StepOpKind kind, Direction direction,
                                        double bytes, const std::string& what) const {
  return {.kind = kind,
          .category = OpCategory::other_communication,
          .label = model.layers()[layer].layer.name + " " + what,
          .layer = layer,
          .direction = direction,
          .bytes = bytes,
          .group = CollectiveGroup::tensor};
}

std::vector<StepOp> LayerMessages::gathered_inputs(std::size_t layer) const {
  std::vector<StepOp> ops;
  const auto& shard = plan.layers[layer];
  const auto& producers = model.layers()[layer].input_indices;
  for (std::size_t k = 0; k < producers.size(); ++k) {
    if (!shard.tensor.gathered_inputs[k]) continue;
    ops.push_back(tensor_collective(layer, StepOpKind::group_allgather, Direction::forward,
                                    tensor_bytes(shard.local_inputs[k], dtype),
                                    "gathers " + model.layers()[producers[k]].layer.name));
    ops.back().input = static_cast<int>(k);
  }
  return ops;
}

std::vector<StepOp> LayerMessages::reduced_output(std::size_t layer) const {
  const auto& shard = plan.layers[layer];
  if (shard.tensor.reduces_output()) {
    return {tensor_collective(layer, StepOpKind::group_allreduce, Direction::forward,
                              tensor_bytes(shard.local_output, dtype), "output partial sums")};
  }
  if (!shard.tensor.reduces_class_sums()) return {};
  const auto& output = shard.local_output;
  const double positions =
      static_cast<double>(output.elements() / std::max<std::int64_t>(1, output.c));
  return {tensor_collective(
      layer, StepOpKind::group_allreduce, Direction::forward,
      kClassSumsPerPosition * positions * static_cast<double>(dtype_bytes(DType::float32)),
      "class sums")};
}

std::vector<StepOp> LayerMessages::reduced_input_gradient(std::size_t layer) const {
  const auto& shard = plan.layers[layer];
  if (!shard.tensor.reduces_input_gradient()) return {};
  return {tensor_collective(layer, StepOpKind::group_allreduce, Direction::backward_data,
                            tensor_bytes(shard.local_inputs.front(), dtype),
                            "input gradient partial sums")};
}

std::vector<StepOp> LayerMessages::redistribution(std::size_t layer, Direction direction) const {
  if (plan.config.spatial_parts() <= 1 || layer != plan.spatial_end || layer == 0) return {};
  const auto& producer = plan.layers[model.layers()[layer].input_indices.front()];
  // Each GPU of the group goes on with local_batch whole samples (ceil(mini-batch / parts): with
  // fewer samples than parts, several GPUs hold the same one) and receives every peer's shard
  // of them: a true all-to-all when the samples spread evenly, an all-gather for one sample.
  const double samples_kept = static_cast<double>(plan.layers[layer].local_batch);
  const double samples_held = static_cast<double>(producer.local_batch);
  const bool forward = direction == Direction::forward;
  return {{.kind = StepOpKind::group_alltoall,
           .category = OpCategory::other_communication,
           .label = std::string("redistribute ") + (forward ? "activations" : "gradients") +
                    " before " + model.layers()[layer].layer.name,
           .layer = layer,
           .direction = direction,
           .bytes = tensor_bytes(producer.local_output, dtype) * samples_kept / samples_held}};
}

// Tensors between this stage and another: a layer's output goes once to every other stage
// holding readers of it, and is received there by the first of them to run forward; its
// gradient comes back from each such stage once the last of them there has run backward.
std::vector<int> LayerMessages::reader_stages(std::size_t tensor) const {
  std::vector<int> stages;
  for (auto consumer : model.consumers_of(tensor)) {
    const int other = plan.layers[consumer].stage;
    if (other != stage && std::find(stages.begin(), stages.end(), other) == stages.end()) {
      stages.push_back(other);
    }
  }
  return stages;
}

// Whether `layer` is the first reader of `tensor` on this stage (the lowest index: first in
// forward, last in backward).
bool LayerMessages::first_reader_here(std::size_t tensor, std::size_t layer) const {
  for (auto consumer : model.consumers_of(tensor)) {
    if (plan.layers[consumer].stage == stage) return consumer == layer;
  }
  return false;
}

StepOp LayerMessages::stage_message(StepOpKind kind, std::size_t tensor, Direction direction,
                                    int peer) const {
  const bool forward = direction == Direction::forward;
  const bool sends = kind == StepOpKind::stage_send;
  return {.kind = kind,
          .category = OpCategory::other_communication,
          .label = std::string(sends ? "send " : "receive ") + (forward ? "" : "gradient of ") +
                   model.layers()[tensor].layer.name + (sends ? " to" : " from") + " stage " +
                   std::to_string(peer),
          .layer = tensor,
          .direction = direction,
          .bytes = tensor_bytes(plan.layers[tensor].local_output, dtype),
          .peer_stage = peer};
}

std::vector<StepOp> LayerMessages::received_inputs(std::size_t layer) const {
  std::vector<StepOp> ops;
  for (auto producer : model.layers()[layer].input_indices) {
    const int from = plan.layers[producer].stage;
    if (from != stage && first_reader_here(producer, layer)) {
      ops.push_back(stage_message(StepOpKind::stage_recv, producer, Direction::forward, from));
    }
  }
  return ops;
}

std::vector<StepOp> LayerMessages::sent_output(std::size_t layer) const {
  std::vector<StepOp> ops;
  for (int to : reader_stages(layer)) {
    ops.push_back(stage_message(StepOpKind::stage_send, layer, Direction::forward, to));
  }
  return ops;
}

std::vector<StepOp> LayerMessages::received_output_gradients(std::size_t layer) const {
  std::vector<StepOp> ops;
  // As sent_input_gradients: no gradient comes back for the samples.
  if (!gradient_flows_to(model, layer)) return ops;
  for (int from : reader_stages(layer)) {
    ops.push_back(stage_message(StepOpKind::stage_recv, layer, Direction::backward_data, from));
  }
  return ops;
}

std::vector<StepOp> LayerMessages::sent_input_gradients(std::size_t layer) const {
  std::vector<StepOp> ops;
  for (auto producer : model.layers()[layer].input_indices) {
    const int to = plan.layers[producer].stage;
    if (to != stage && first_reader_here(producer, layer) && gradient_flows_to(model, producer)) {
      ops.push_back(stage_message(StepOpKind::stage_send, producer, Direction::backward_data, to));
    }
  }
  return ops;
}

}  // namespace tessera
