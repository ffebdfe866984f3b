#pragma once
// Training CosmoFlow for a few steps with the real backend's Trainer on the given ranks, for the
// in-process and the MPI tests: the losses of every step and the final parameters.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tessera/core/model/model_file.hpp"
#include "tessera/core/model/training_task.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"
#include "tessera/core/strategy/step_program.hpp"
#include "tessera/core/strategy/table_copies.hpp"
#include "tessera/core/zoo/model_zoo.hpp"
#include "tessera/kernels/communicator.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/layer_geometry.hpp"
#include "tessera/kernels/real/rank_layout.hpp"
#include "tessera/kernels/real/step_input_source.hpp"
#include "tessera/kernels/real/synthetic_input.hpp"
#include "tessera/kernels/real/trainer.hpp"

namespace tessera::kernels::testing {

struct TrainingRun {
  std::vector<double> losses;
  std::vector<float> parameters;
  real::StepReport last_step;
  // Per layer, its parameters where this rank's stage holds the layer (else empty).
  std::vector<std::vector<float>> layer_parameters;
  // Where the case names a reference run: this rank's part of each of the reference's layers
  // that runs here (Trainer::part_of), to compare with layer_parameters.
  std::vector<std::vector<float>> reference_parts;
  // Per layer, the layer whose parameters it holds alone (table_copies.hpp's origin).
  std::vector<std::size_t> parameter_origins;
  StepProgram program;                     // the one the trainer played
  double peak_bytes = 0;                   // the most device memory the trainer held at once
  std::size_t unplanned_convolutions = 0;  // problems run without a plan from the program
};

struct TrainingCase {
  std::int64_t width = 16;
  bool batch_norm = false;
  ParallelConfig config;
  std::string spatial_until;  // first unsplit layer
  StagePlacement placement;   // the model-parallel stages (config.model_degree)
  int steps = 3;
  Optimizer optimizer = Optimizer::adam;
  float learning_rate = 0;  // the optimizer's default
  std::int64_t dataset_samples = 8;
  // Every convolution kernel as two micro-batches of half the batch, with the library's first
  // algorithm for that size (an exact re-arrangement of the undivided kernel).
  bool halve_micro_batches = false;
  // Batch-norm statistics over every rank (synchronised across replicas), not the spatial group.
  bool global_batch_norm = false;
  // Only deterministic convolution algorithms (TrainerOptions::deterministic).
  bool deterministic = false;
  // Feature maps offloaded to host memory (vDNN) as this decision says.
  OffloadDecision offload;
  // Segments' inner feature maps dropped after forward and made again before backward.
  RecomputePolicy recompute = RecomputePolicy::none;
  // What the ranks summing the gradients split between them (ZeRO).
  ShardLevel shard = ShardLevel::none;
  double gradient_bucket_bytes = 1 << 20;
  // The buckets summed beside backward, waited for at its end (a GPU's program), not each where
  // it is queued (a CPU's).
  bool overlap_gradients = false;
  // The device: a CPU holding at most this much (none: the shared uncapped one).
  Device* device = nullptr;
  // Each replica's samples per step, where they differ (data_split: proportional); empty:
  // config.mini_batch each.
  std::vector<std::int64_t> replica_batches;
  // A run of the whole model (one rank) whose layers' parameters to cut to this rank's parts.
  const TrainingRun* reference = nullptr;
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

// Profile rows for every window the split convolutions of `plan` run (window_kernels.hpp), as
// `tessera profile` would measure them on `device`: each algorithm the device offers for the
// window at half the batch (1 ms, the first fastest) and at the whole batch (10 ms), so that the
// windows follow halved_micro_batch_plan's micro-batches wherever its algorithm runs on them.
inline ProfileDatabase window_profiles(Device& device, const ModelGraph& model,
                                       const ShardPlan& plan) {
  ProfileDatabase profiles;
  for (std::size_t i = 0; i < model.layers().size(); ++i) {
    const auto& layer = model.layers()[i];
    if (!runs_window_kernels(layer.layer, plan.layers[i].spatially_split)) continue;
    const std::int64_t batch = plan.layers[i].local_batch;
    const std::int64_t half = std::max<std::int64_t>(1, batch / 2);
    for (const auto direction :
         {Direction::forward, Direction::backward_data, Direction::backward_filter}) {
      for (const auto part : {StepPart::whole, StepPart::interior, StepPart::boundary}) {
        for (const auto& windows :
             window_kernels_by_shard(layer, plan.config.spatial_grid, direction, part)) {
          for (const auto& window : windows) {
            const auto geometry = convolution_geometry(window.layer, window.input, window.output);
            for (const std::int64_t samples : {half, batch}) {
              const auto offered = device.convolutions().algorithms(geometry, samples, direction);
              for (std::size_t k = 0; k < offered.size(); ++k) {
                profiles.add({.device = "cpu",
                              .op = "conv",
                              .direction = direction,
                              .shape = window.shape,
                              .micro_batch = samples,
                              .algorithm = offered[k].name,
                              .time_seconds = (samples == half ? 1e-3 : 1e-2) * double(k + 1),
                              .workspace_bytes = offered[k].workspace_bytes});
              }
            }
          }
        }
      }
    }
  }
  return profiles;
}

// How far trained weights stand from a reference's: the largest absolute difference, and the
// largest reference weight it is judged against (a relative bound over the whole network).
struct WeightGap {
  double largest_difference = 0;
  double largest_weight = 0;
  void add(const std::vector<float>& weights, const std::vector<float>& reference) {
    for (std::size_t i = 0; i < weights.size() && i < reference.size(); ++i) {
      const auto theirs = static_cast<double>(reference[i]);
      largest_difference =
          std::max(largest_difference, std::abs(static_cast<double>(weights[i]) - theirs));
      largest_weight = std::max(largest_weight, std::abs(theirs));
    }
  }
};

// A run over several ranks against one rank's reference on the same global batch: each step's
// loss within 1e-5 of the reference's (relative to 1 + loss). `rank` names the rank in messages.
inline void expect_losses_match(const TrainingRun& run, const TrainingRun& reference, int rank) {
  ASSERT_EQ(run.losses.size(), reference.losses.size());
  for (std::size_t step = 0; step < run.losses.size(); ++step) {
    EXPECT_NEAR(run.losses[step], reference.losses[step], 1e-5 * (1 + reference.losses[step]))
        << "step " << step << ", rank " << rank;
  }
}

// As expect_losses_match, and the whole network's weights within 1e-5 of the largest reference
// weight; and the weights moved, so that the comparison is not between two untrained networks.
inline void expect_trains_like(const TrainingRun& run, const TrainingRun& reference, int rank) {
  expect_losses_match(run, reference, rank);
  ASSERT_EQ(run.parameters.size(), reference.parameters.size());
  WeightGap gap;
  gap.add(run.parameters, reference.parameters);
  EXPECT_LE(gap.largest_difference, 1e-5 * gap.largest_weight) << "rank " << rank;
  EXPECT_NE(run.losses.front(), run.losses.back()) << "the weights did not move";
}

// The step program of `stage` for case `c`, as the real backend builds it on a CPU (each bucket
// waited for where it is queued, unless the case overlaps them), reading nothing (synthetic
// samples), its kernels undivided at the roofline or as `micro_batching` says.
inline StepProgram cpu_program(const ModelGraph& model, const ShardPlan& plan,
                               const TrainingCase& c, const NetworkMicroBatchPlan& micro_batching,
                               int stage, const ProfileDatabase* profiles) {
  DeviceRoofline roofline;
  roofline.device = "cpu";
  roofline.fp32_flops_per_second = 1e11;
  roofline.memory_bandwidth_bytes_per_second = 1e10;
  constexpr double workspace_bytes = 64.0 * 1024 * 1024;
  const ComputeCostModel costs(roofline, profiles, workspace_bytes);
  const StepOptions options{.optimizer = c.optimizer,
                            .gradient_bucket_bytes = c.gradient_bucket_bytes,
                            .input_source = InputSource::none,
                            .overlap_gradient_allreduce = c.overlap_gradients,
                            .batch_norm_over_replicas = c.global_batch_norm,
                            .offload = c.offload,
                            .workspace_bytes = workspace_bytes,
                            .shard = c.shard,
                            .recompute = c.recompute};
  return build_step_programs(model, plan, costs, options, micro_batching)
      .at(static_cast<std::size_t>(stage));
}

// "gpt2": the tiny GPT of the sharding and tensor tests (2 blocks of 64, 4 heads, its head tied
// to the embedding, 8 tokens, a vocabulary of 48 that tensor degrees 2 and 4 divide);
// "gpt2_vocabulary_47": the same with a vocabulary of 47 that no degree divides (padded); "bert"
// and "bert_vocabulary_47": the zoo's BERT at that size (its decoder tied with a bias of its
// own); any other name: a model file of tests/data/models/families.
inline ModelGraph tiny_gpt_or_family(const std::string& name) {
  for (const std::string zoo : {"gpt2", "bert"}) {
    if (name != zoo && name != zoo + "_vocabulary_47") continue;
    return build_zoo_model(zoo, {{"layers", "2"},
                                 {"hidden", "64"},
                                 {"heads", "4"},
                                 {"sequence_length", "8"},
                                 {"vocabulary", name == zoo ? "48" : "47"}});
  }
  return load_model_file(std::string(TESSERA_TEST_DATA_DIR) + "/models/families/" + name + ".yaml");
}

// What layer `i` holds where one rank trained the model in `reference`: the table's owner's
// parameters where it holds a copy of a table (`origin`, table_copies.hpp), followed by its own
// where it has some beside the table (BERT's decoder bias).
inline std::vector<float> reference_parameters(const TrainingRun& reference, std::size_t i,
                                               std::size_t origin) {
  auto whole = reference.layer_parameters.at(origin);
  if (origin != i) {
    const auto& own = reference.layer_parameters.at(i);
    whole.insert(whole.end(), own.begin(), own.end());
  }
  return whole;
}

// Trains `model` on the synthetic data set of its task (synthetic_input.hpp).
inline TrainingRun train_model(Communicator& world, const ModelGraph& model,
                               const TrainingCase& c) {
  static auto shared_device = open_cpu_device();
  Device* device = c.device != nullptr ? c.device : shared_device.get();
  auto config = c.config;
  if (config.spatial_grid.empty()) {
    config.spatial_grid.assign(model.layers().front().output_shape.spatial.size(), 1);
  }
  auto layout = real::make_rank_layout(world, config, c.replica_batches);
  config.mini_batch = layout.replica_batch;  // the plan of this replica's own batch
  const auto plan = plan_shards(model, config, c.spatial_until, c.placement);
  const auto micro_batching = c.halve_micro_batches ? halved_micro_batch_plan(*device, model, plan)
                                                    : NetworkMicroBatchPlan{};
  const auto windows =
      c.halve_micro_batches ? window_profiles(*device, model, plan) : ProfileDatabase{};
  real::Trainer trainer(model, plan,
                        cpu_program(model, plan, c, micro_batching, static_cast<int>(layout.stage),
                                    c.halve_micro_batches ? &windows : nullptr),
                        *device, layout,
                        {.optimizer = c.optimizer,
                         .learning_rate = c.learning_rate,
                         .seed = 7,
                         .deterministic = c.deterministic});
  const real::SyntheticInput samples{.seed = 3,
                                     .dataset_samples = c.dataset_samples,
                                     .sample = model.layers().front().output_shape,
                                     .targets = target_layout(model)};
  auto source = real::synthetic_input_source(samples, {.samples_before = layout.samples_before,
                                                       .mini_batch = layout.replica_batch,
                                                       .global_batch = layout.global_batch,
                                                       .first = trainer.input_first(),
                                                       .count = trainer.input_count()});
  TrainingRun run;
  for (int step = 0; step < c.steps; ++step) {
    run.last_step = trainer.step(*source);
    run.losses.push_back(run.last_step.loss);
  }
  run.parameters = trainer.parameters();
  // A tied table's copy on another stage (table_copies.hpp) holds what its owner does alone.
  const auto tables = table_copies(model, plan);
  for (std::size_t i = 0; i < model.layers().size(); ++i) {
    run.layer_parameters.push_back(trainer.parameters_of(i));
    run.parameter_origins.push_back(tables.origin.at(i));
    if (c.reference != nullptr) {
      const auto whole = reference_parameters(*c.reference, i, tables.origin.at(i));
      run.reference_parts.push_back(
          run.layer_parameters.back().empty() ? std::vector<float>{} : trainer.part_of(i, whole));
    }
  }
  run.program = trainer.program();
  run.peak_bytes = trainer.peak_bytes();
  run.unplanned_convolutions = trainer.convolution_plan_counts().without_plan;
  return run;
}

inline TrainingRun train_cosmoflow(Communicator& world, const TrainingCase& c) {
  return train_model(
      world,
      build_zoo_model("cosmoflow", {{"width", std::to_string(c.width)},
                                    {"batch_norm", c.batch_norm ? "true" : "false"}}),
      c);
}

// What the program's ops say to execute, in order: the trainer's record of a step must equal it
// (a trainer working the schedule out itself would show up here).
inline std::vector<real::ExecutedOp> expected_executions(const StepProgram& program) {
  std::vector<real::ExecutedOp> expected;
  for (const auto& op : program.ops) expected.push_back(real::expected_execution(op));
  return expected;
}

}  // namespace tessera::kernels::testing
