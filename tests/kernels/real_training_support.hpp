#pragma once
// Training CosmoFlow for a few steps with the real backend's Trainer on the given ranks, for the
// in-process and the MPI tests: the losses of every step and the final parameters.
#include <string>
#include <vector>

#include "tessera/core/model_zoo.hpp"
#include "tessera/core/parallel_strategy.hpp"
#include "tessera/kernels/communicator.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/real/rank_layout.hpp"
#include "tessera/kernels/real/synthetic_input.hpp"
#include "tessera/kernels/real/trainer.hpp"

namespace tessera::kernels::testing {

struct TrainingRun {
  std::vector<double> losses;
  std::vector<float> parameters;
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
};

inline TrainingRun train_cosmoflow(Communicator& world, const TrainingCase& c) {
  static auto device = open_cpu_device();
  const auto model = build_zoo_model(
      "cosmoflow",
      {{"width", std::to_string(c.width)}, {"batch_norm", c.batch_norm ? "true" : "false"}});
  auto config = c.config;
  if (config.spatial_grid.empty()) config.spatial_grid = {1, 1, 1};
  const auto plan = plan_shards(model, config, c.spatial_until, {});
  auto layout = real::make_rank_layout(world, config);
  real::Trainer trainer(model, plan, *device, layout,
                        {.optimizer = c.optimizer,
                         .learning_rate = c.learning_rate,
                         .gradient_bucket_bytes = 1 << 20,
                         .seed = 7});
  const real::SyntheticInput source{.seed = 3,
                                    .dataset_samples = c.dataset_samples,
                                    .sample = model.layers().front().output_shape};
  TrainingRun run;
  for (int step = 0; step < c.steps; ++step) {
    const auto input = real::synthetic_step_input(
        source, step * config.global_batch() + layout.replica * config.mini_batch,
        config.mini_batch, trainer.input_first(), trainer.input_count());
    run.losses.push_back(trainer.step(input).loss);
  }
  run.parameters = trainer.parameters();
  return run;
}

}  // namespace tessera::kernels::testing
