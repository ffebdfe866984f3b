// What a step's programs add up to: each stage's parameters, each layer's compute per pass.
#include <algorithm>

#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/strategy/step_program.hpp"

namespace tessera {

std::vector<double> stage_parameters(const ModelGraph& model, const ShardPlan& plan) {
  std::vector<double> per_stage(static_cast<std::size_t>(std::max(1, plan.stages)), 0.0);
  for (std::size_t i = 0; i < model.layers().size(); ++i) {
    per_stage.at(static_cast<std::size_t>(plan.layers[i].stage)) +=
        static_cast<double>(plan.layers[i].parameters);
  }
  return per_stage;
}

std::vector<LayerComputeTime> layer_compute_times(const ModelGraph& model,
                                                  const std::vector<StepProgram>& programs) {
  const auto& layers = model.layers();
  std::vector<double> forward(layers.size(), 0), backward(layers.size(), 0);
  std::vector<bool> computed(layers.size(), false);
  double update = 0;
  for (const auto& program : programs) {
    double program_update = 0;
    for (const auto& op : program.ops) {
      if (op.kind == StepOpKind::update) program_update += op.seconds;
      if (op.kind != StepOpKind::compute) continue;
      computed[op.layer] = true;
      (op.direction == Direction::forward ? forward : backward)[op.layer] += op.seconds;
    }
    update = std::max(update, program_update);
  }
  std::vector<LayerComputeTime> times;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (computed[i]) times.push_back({layers[i].layer.name, "forward", forward[i]});
  }
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (computed[i]) times.push_back({layers[i].layer.name, "backward", backward[i]});
  }
  times.push_back({"optimizer", "update", update});
  return times;
}

}  // namespace tessera
