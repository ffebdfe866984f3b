#pragma once
// Training CosmoFlow for a few steps with the real backend's Trainer on the given ranks, for the
// in-process and the MPI tests: the losses of every step and the final parameters.
#include <algorithm>
#include <string>
#include <vector>

#include "tessera/core/model_zoo.hpp"
#include "tessera/core/parallel_strategy.hpp"
#include "tessera/kernels/communicator.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/layer_geometry.hpp"
#include "tessera/kernels/real/rank_layout.hpp"
#include "tessera/kernels/real/synthetic_input.hpp"
#include "tessera/kernels/real/trainer.hpp"

namespace tessera::kernels::testing {

struct TrainingRun {
  std::vector<double> losses;
  std::vector<float> parameters;
  real::StepReport last_step;
};

struct TrainingCase {
  std::int64_t width = 16;
  bool batch_norm = false;
  ParallelConfig config;
  std::string spatial_until;  // first unsplit layer
  int steps = 3;
  Optimizer optimizer = Optimizer::adam;
  float learning_rate = 0;  // the optimizer's default
  std::int64_t dataset_samples = 8;
  // Every convolution kernel as two micro-batches of half the batch, with the library's first
  // algorithm for that size (an exact re-arrangement of the undivided kernel).
  bool halve_micro_batches = false;
};

// The plan halve_micro_batches asks for, as the planner would give it from profiles: each
// convolution's local batch (the plan's: whole after the redistribution) in two halves where it
// has two samples or more.
inline NetworkMicroBatchPlan halved_micro_batch_plan(Device& device, const ModelGraph& model,
                                                     const ShardPlan& plan) {
  NetworkMicroBatchPlan network;
  for (std::size_t i = 0; i < model.layers().size(); ++i) {
    const auto& layer = model.layers()[i];
    if (layer.layer.kind != LayerKind::convolution) continue;
    const auto geometry =
        convolution_geometry(layer.layer, layer.input_shapes.at(0), layer.output_shape);
    const std::int64_t batch = plan.layers[i].local_batch;
    const std::int64_t half = std::max<std::int64_t>(1, batch / 2);
    for (const auto direction :
         {Direction::forward, Direction::backward_data, Direction::backward_filter}) {
      const auto algorithm = device.convolutions().algorithms(geometry, half, direction).at(0).name;
      ConvKernelPlan kernel{.layer = i,
                            .layer_name = layer.layer.name,
                            .direction = direction,
                            .batch = batch,
                            .provenance = Provenance::profile};
      kernel.plan.micro_batches = {{.samples = half, .algorithm = algorithm}};
      if (batch > half)
        kernel.plan.micro_batches.push_back({.samples = batch - half, .algorithm = algorithm});
      network.kernels.push_back(kernel);
    }
  }
  return network;
}

inline TrainingRun train_cosmoflow(Communicator& world, const TrainingCase& c) {
  static auto device = open_cpu_device();
  const auto model = build_zoo_model(
      "cosmoflow",
      {{"width", std::to_string(c.width)}, {"batch_norm", c.batch_norm ? "true" : "false"}});
  auto config = c.config;
  if (config.spatial_grid.empty()) config.spatial_grid = {1, 1, 1};
  const auto plan = plan_shards(model, config, c.spatial_until, {});
  auto layout = real::make_rank_layout(world, config);
  const auto micro_batching = c.halve_micro_batches ? halved_micro_batch_plan(*device, model, plan)
                                                    : NetworkMicroBatchPlan{};
  real::Trainer trainer(model, plan, *device, layout,
                        {.optimizer = c.optimizer,
                         .learning_rate = c.learning_rate,
                         .gradient_bucket_bytes = 1 << 20,
                         .seed = 7,
                         .micro_batching = c.halve_micro_batches ? &micro_batching : nullptr});
  const real::SyntheticInput source{.seed = 3,
                                    .dataset_samples = c.dataset_samples,
                                    .sample = model.layers().front().output_shape};
  TrainingRun run;
  for (int step = 0; step < c.steps; ++step) {
    const auto input = real::synthetic_step_input(
        source, step * config.global_batch() + layout.replica * config.mini_batch,
        config.mini_batch, trainer.input_first(), trainer.input_count());
    run.last_step = trainer.step(input);
    run.losses.push_back(run.last_step.loss);
  }
  run.parameters = trainer.parameters();
  return run;
}

}  // namespace tessera::kernels::testing
