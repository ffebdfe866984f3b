#include "tessera/core/point/profile_plan.hpp"

#include <optional>
#include <set>
#include <string>

#include "tessera/core/cost/cost_model.hpp"
#include "tessera/core/micro_batching/micro_batch_planner.hpp"
#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/strategy/rank_numbering.hpp"
#include "tessera/core/strategy/step_program.hpp"
#include "tessera/core/strategy/window_kernels.hpp"

namespace tessera {
namespace {

std::vector<Direction> directions_of(const Layer& layer, const std::vector<TensorShape>& inputs,
                                     const TensorShape& output) {
  if (layer.kind == LayerKind::input) return {};
  // The same rule as the cost model: backward-filter only where there are weights.
  const bool has_weights = layer_cost(layer, inputs, output, 1, DType::float32).parameters > 0;
  if (has_weights)
    return {Direction::forward, Direction::backward_data, Direction::backward_filter};
  return {Direction::forward, Direction::backward_data};
}

// The parts a split convolution's windows may run in: forward overlapped with the halos or not.
std::vector<StepPart> parts_of(Direction direction) {
  if (direction == Direction::forward) {
    return {StepPart::whole, StepPart::interior, StepPart::boundary};
  }
  return {StepPart::whole};
}

// The one stage `profiling`'s rank times at `point`: at a point of exactly one GPU per profiling
// rank, the stage that rank holds; none (every stage) at other points.
std::optional<int> profiled_stage(const SweepPoint& point, const ProfilingRank& profiling) {
  if (point.config.gpus() != profiling.ranks) return std::nullopt;
  return RankNumbering(point.config).stage_of(profiling.rank);
}

}  // namespace

std::string kernel_identity(const KernelToProfile& kernel) {
  return kernel.op + "|" + kernel.shape + "|" + to_string(kernel.direction) + "|" +
         std::to_string(kernel.batch);
}

std::vector<KernelToProfile> kernels_to_profile(const LoadedScenario& scenario,
                                                const ProfilingRank& profiling) {
  std::vector<KernelToProfile> kernels;
  std::set<std::string> seen;  // kernel_identity
  const auto& layers = scenario.model.layers();
  for (const SweepPoint& point : scenario.points) {
    const auto own_stage = profiled_stage(point, profiling);
    for (std::size_t i = 0; i < layers.size(); ++i) {
      if (own_stage && point.plan.micro_batch_layers[i].stage != *own_stage) continue;
      // Recurrent models' layers have no device kernel to time yet; the cost model gives them
      // their roofline time.
      if (is_sequence_kind(layers[i].layer.kind)) continue;
      // A pipeline runs each layer at the micro-batch size.
      const LayerShard& shard = point.plan.micro_batch_layers[i];
      KernelToProfile kernel;
      kernel.layer = shard.tensor.local_layer;
      for (const TensorShape& input : shard.local_inputs)
        kernel.inputs.push_back(input.with_batch(1));
      kernel.output = shard.local_output.with_batch(1);
      kernel.dtype = scenario.scenario.model.dtype;
      kernel.batch = shard.local_batch;
      kernel.op = to_string(kernel.layer.kind);
      kernel.shape = kernel_shape_key(kernel.layer, kernel.inputs, kernel.output);
      kernel.micro_batches =
          is_convolution(kernel.layer.kind)
              ? candidate_micro_batch_sizes(scenario.scenario.micro_batching.policy, kernel.batch)
              : std::vector<std::int64_t>{kernel.batch};
      const auto directions = directions_of(kernel.layer, kernel.inputs, kernel.output);
      for (Direction direction : directions) {
        kernel.direction = direction;
        if (seen.insert(kernel_identity(kernel)).second) kernels.push_back(kernel);
      }
      if (!runs_window_kernels(kernel.layer, shard.spatially_split)) continue;
      for (Direction direction : directions) {
        for (StepPart part : parts_of(direction)) {
          for (const auto& windows :
               window_kernels_by_shard(layers[i], point.config.spatial_grid, direction, part)) {
            for (const WindowKernel& window : windows) {
              KernelToProfile windowed = kernel;
              windowed.layer = window.layer;
              windowed.inputs = {window.input};
              windowed.output = window.output;
              windowed.shape = window.shape;
              windowed.direction = direction;
              windowed.window = true;
              if (seen.insert(kernel_identity(windowed)).second)
                kernels.push_back(std::move(windowed));
            }
          }
        }
      }
    }
  }
  return kernels;
}

std::vector<ParameterKernelToProfile> parameter_kernels_to_profile(const LoadedScenario& scenario,
                                                                   const ProfilingRank& profiling) {
  std::vector<ParameterKernelToProfile> kernels;
  std::set<std::pair<ParameterKernel, double>> seen;
  const auto& model = scenario.scenario.model;
  auto add = [&](ParameterKernel kernel, double parameters) {
    if (parameters <= 0 || !seen.emplace(kernel, parameters).second) return;
    const bool update = kernel == ParameterKernel::update;
    kernels.push_back({.kernel = kernel,
                       .optimizer = model.optimizer,
                       .parameters = parameters,
                       .dtype = model.dtype,
                       .op = update ? update_op(model.optimizer) : gradient_sum_op(),
                       .shape = parameters_shape(parameters)});
  };
  for (const SweepPoint& point : scenario.points) {
    const auto own_stage = profiled_stage(point, profiling);
    const auto parameters = stage_parameters(scenario.model, point.plan);
    for (std::size_t stage = 0; stage < parameters.size(); ++stage) {
      if (!own_stage || static_cast<int>(stage) == *own_stage) {
        add(ParameterKernel::update, parameters[stage]);
      }
    }
  }
  for (const SweepPoint& point : scenario.points) {
    if (point.plan.config.micro_batches <= 1) continue;
    const auto own_stage = profiled_stage(point, profiling);
    for (const auto& layer : point.plan.layers) {
      if (!own_stage || layer.stage == *own_stage) {
        add(ParameterKernel::gradient_sum, static_cast<double>(layer.parameters));
      }
    }
  }
  return kernels;
}

}  // namespace tessera
