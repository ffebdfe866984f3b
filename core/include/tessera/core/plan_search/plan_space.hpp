#pragma once
// The strategies `tessera plan` chooses among for one model on one cluster: data-parallel
// replicas, the spatial grid and the layer where the spatial split stops, model-parallel stages
// and their pipeline (micro-batches, schedule), the tensor degree, ZeRO's sharding, vDNN's offload
// policy and the convolution workspace limit, at a fixed global batch (or a fixed batch per
// replica) and a GPU count. Keys the user pins keep the scenario's value. Enumeration only: whether
// a strategy is valid, fits and is worth simulating is plan_screen.hpp's question.
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tessera/core/loading/scenario_loader.hpp"

namespace tessera {

// One strategy: everything a scenario's parallelism, memory and kernels sections say that the
// search may change.
struct PlanStrategy {
  std::int64_t data = 1;
  std::vector<std::int64_t> spatial_grid;  // one entry per spatial axis
  std::string spatial_until;               // "" = the scenario's default (first dense layer)
  std::int64_t model_degree = 1;
  std::vector<std::string> stage_starts;  // "" entries or empty = balanced by roofline time
  // An explicit layer-to-stage placement (stage_placement.hpp); empty: contiguous stages.
  std::vector<std::pair<std::string, std::int64_t>> placement;
  std::int64_t micro_batches = 1;  // the mini-batch split to flow through the stages
  PipelineSchedule schedule = PipelineSchedule::gpipe;
  std::int64_t tensor = 1;  // GPUs of a tensor group (tensor_split.hpp)
  ShardLevel shard = ShardLevel::none;
  std::int64_t mini_batch = 1;  // samples per replica
  OffloadPolicy offload = OffloadPolicy::none;
  double workspace_limit_bytes = 0;

  ParallelConfig config() const;
  StagePlacement stage_placement() const;
  std::int64_t gpus() const { return config().gpus(); }
  std::int64_t global_batch() const { return data * mini_batch; }
  bool operator==(const PlanStrategy&) const = default;
};

// "data 16 x grid 4x2x1 x model 1, 4 samples/replica, split until pool3, offload none, workspace
// 64.00 MiB"; the spatial end is left out where nothing is split, the pipeline ("in 4
// micro-batches (1f1b)") where there is one micro-batch, the tensor degree (" x tensor 4") and
// the sharding (", shard optimizer") where there are none.
std::string describe(const PlanStrategy& strategy);
// A canonical text that identifies the strategy in stored results (resume): equal strategies,
// equal keys.
std::string strategy_key(const PlanStrategy& strategy);

struct PlanCandidate {
  std::size_t index = 0;  // in enumeration order: stable for the same inputs
  PlanStrategy strategy;
};

// The scenario keys the search can vary. A pinned key keeps the scenario's value.
const std::vector<std::string>& plan_search_keys();

struct PlanSpaceOptions {
  std::vector<std::int64_t> gpus;  // GPU counts to plan for (at least one)
  // Exactly one of the two holds the batch: the global batch stays fixed and the replicas share
  // it, or every replica keeps this many samples.
  std::optional<std::int64_t> global_batch;
  std::optional<std::int64_t> mini_batch;
  std::set<std::string> pinned;  // from plan_search_keys()
  std::int64_t max_model_degree = 8;
  // Tensor degrees to try: the divisors of a replica's GPUs up to this many (a DGX node's 8 by
  // default: a tensor group's collectives in every layer want NVLink).
  std::int64_t max_tensor_degree = 8;
  // Micro-batches to pipeline through model-parallel stages: the divisors of the batch per
  // replica up to this many, each (but one) with the GPipe and the one-forward-one-backward
  // schedule. A single stage runs one micro-batch.
  std::int64_t max_micro_batches = 8;
  // GPUs one sample's spatial split may span. Splitting finer plays an all-to-all of
  // parts x parts flows at the split's end (seconds to minutes of simulation per candidate at
  // 256 parts) and leaves each GPU slabs of a few planes.
  std::int64_t max_spatial_parts = 64;
  // Offloading only adds copies to a step, so by default each strategy is tried with the least
  // offloading that lets it fit (vDNN's dyn: none, conv, all, then no workspace). With
  // every_offload_policy each of none, conv and all is a candidate of its own, for a Pareto
  // front that trades time for memory by offloading too.
  bool every_offload_policy = false;
  // Workspace limits to try (bytes). Empty: only the scenario's. Without profiles every kernel
  // is timed by its roofline whatever the limit, so a smaller limit would look free.
  std::vector<double> workspace_limits_bytes;
};

// The scenario's own batch rule: a weak-scaling sweep keeps the batch per replica, anything else
// the global batch of its parallelism section (data x mini-batch).
PlanSpaceOptions default_space_options(const LoadedScenario& scenario);

// Every combination, in a deterministic order (GPU counts as given, then data, model degree,
// tensor degree, spatial grid, split end, micro-batches and schedule, sharding, offload,
// workspace). Sharding is tried where there is something to shard (a replica's stage held by
// several GPUs): none, optimizer, gradients and weights, only the first two under a pipeline. A
// scenario whose data split is proportional to GPU speed gets pure data parallelism only, as its
// parser demands. Throws InputError naming `option` when a pinned value cannot be kept at a GPU
// count, or the batch cannot be split at all.
std::vector<PlanCandidate> enumerate_candidates(const LoadedScenario& scenario,
                                                const PlanSpaceOptions& options);

// The layers where a spatial split may stop, by name: every pooling layer (where extents shrink,
// so a split ending there leaves the least to redistribute) and "" (the scenario's default).
std::vector<std::string> split_end_candidates(const ModelGraph& model);

// The scenario's own strategy (its parallelism section, point `point` of its sweep).
PlanStrategy scenario_strategy(const LoadedScenario& scenario, std::size_t point);

}  // namespace tessera
