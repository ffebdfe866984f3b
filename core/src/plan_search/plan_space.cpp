#include "tessera/core/plan_search/plan_space.hpp"

#include <algorithm>

#include "tessera/core/common/quantity.hpp"

namespace tessera {
namespace {

constexpr const char* kData = "parallelism.data";
constexpr const char* kGrid = "parallelism.spatial.grid";
constexpr const char* kUntil = "parallelism.spatial.until";
constexpr const char* kDegree = "parallelism.model.degree";
constexpr const char* kOffload = "memory.offload";
constexpr const char* kWorkspace = "kernels.micro_batching.workspace_limit";
constexpr const char* kMicroBatches = "parallelism.model.micro_batches";
constexpr const char* kSchedule = "parallelism.model.schedule";
constexpr const char* kTensor = "parallelism.tensor";
constexpr const char* kShard = "memory.shard";

std::vector<std::int64_t> divisors(std::int64_t n) {
  std::vector<std::int64_t> result;
  for (std::int64_t d = 1; d * d <= n; ++d) {
    if (n % d != 0) continue;
    result.push_back(d);
    if (d != n / d) result.push_back(n / d);
  }
  std::sort(result.begin(), result.end());
  return result;
}

// Every grid of `rank` axes whose parts multiply to `parts`, each axis at most the input's extent
// along it (a finer split leaves a GPU nothing), in lexicographic order.
void grids(std::int64_t parts, const std::vector<std::int64_t>& extents, std::size_t axis,
           std::vector<std::int64_t>& grid, std::vector<std::vector<std::int64_t>>& out) {
  if (axis == extents.size()) {
    if (parts == 1) out.push_back(grid);
    return;
  }
  for (auto d : divisors(parts)) {
    if (d > extents[axis]) break;
    grid[axis] = d;
    grids(parts / d, extents, axis + 1, grid, out);
  }
}

std::vector<std::vector<std::int64_t>> grids_of(std::int64_t parts,
                                                const std::vector<std::int64_t>& extents) {
  std::vector<std::vector<std::int64_t>> out;
  std::vector<std::int64_t> grid(extents.size(), 1);
  grids(parts, extents, 0, grid, out);
  return out;
}

std::vector<std::int64_t> spatial_extents(const ModelGraph& model) {
  return model.layers().front().output_shape.spatial;
}

bool all_ones(const std::vector<std::int64_t>& grid) {
  return std::all_of(grid.begin(), grid.end(), [](std::int64_t parts) { return parts == 1; });
}

}  // namespace

ParallelConfig PlanStrategy::config() const {
  ParallelConfig config;
  config.data = data;
  config.spatial_grid = spatial_grid;
  config.model_degree = model_degree;
  config.mini_batch = mini_batch;
  config.micro_batches = micro_batches;
  config.schedule = schedule;
  config.tensor = tensor;
  return config;
}

StagePlacement PlanStrategy::stage_placement() const {
  return placement.empty() ? StagePlacement(stage_starts) : StagePlacement::of_layers(placement);
}

std::string describe(const PlanStrategy& s) {
  std::string text = "data " + std::to_string(s.data) + " x grid " +
                     grid_to_string(s.spatial_grid) + " x model " + std::to_string(s.model_degree) +
                     (s.tensor > 1 ? " x tensor " + std::to_string(s.tensor) : "") + ", " +
                     counted(s.mini_batch, "sample") + "/replica";
  if (s.micro_batches > 1) {
    text +=
        " in " + std::to_string(s.micro_batches) + " micro-batches (" + to_string(s.schedule) + ")";
  }
  if (!all_ones(s.spatial_grid)) {
    text += ", split until " +
            (s.spatial_until.empty() ? std::string("the first dense layer") : s.spatial_until);
  }
  if (s.shard != ShardLevel::none) text += ", shard " + to_string(s.shard);
  text +=
      ", offload " + to_string(s.offload) + ", workspace " + format_bytes(s.workspace_limit_bytes);
  return text;
}

std::string strategy_key(const PlanStrategy& s) {
  std::string stages;
  for (const auto& start : s.stage_starts) stages += (stages.empty() ? "" : ",") + start;
  for (const auto& [layer, stage] : s.placement) {
    stages += (stages.empty() ? "" : ",") + layer + ":" + std::to_string(stage);
  }
  return "data=" + std::to_string(s.data) + ";grid=" + grid_to_string(s.spatial_grid) +
         ";until=" + s.spatial_until + ";model=" + std::to_string(s.model_degree) +
         ";stages=" + stages + ";micro_batches=" + std::to_string(s.micro_batches) +
         ";schedule=" + to_string(s.schedule) + ";mini_batch=" + std::to_string(s.mini_batch) +
         ";offload=" + to_string(s.offload) +
         ";workspace=" + std::to_string(static_cast<std::int64_t>(s.workspace_limit_bytes)) +
         // Left out at their defaults, so that results stored before they existed still match.
         (s.tensor > 1 ? ";tensor=" + std::to_string(s.tensor) : "") +
         (s.shard != ShardLevel::none ? ";shard=" + to_string(s.shard) : "");
}

const std::vector<std::string>& plan_search_keys() {
  static const std::vector<std::string> keys{kData,     kGrid,   kUntil, kDegree,  kMicroBatches,
                                             kSchedule, kTensor, kShard, kOffload, kWorkspace};
  return keys;
}

PlanSpaceOptions default_space_options(const LoadedScenario& loaded) {
  PlanSpaceOptions options;
  const auto& s = loaded.scenario;
  const auto& base = loaded.points.front().config;
  if (s.sweep && s.sweep->scaling == Scaling::weak) {
    options.mini_batch = base.mini_batch;
  } else {
    options.global_batch = base.global_batch();
  }
  options.gpus.push_back(largest_point_gpus(loaded));
  return options;
}

PlanStrategy scenario_strategy(const LoadedScenario& loaded, std::size_t point) {
  const auto& s = loaded.scenario;
  const auto& config = loaded.points.at(point).config;
  PlanStrategy strategy;
  strategy.data = config.data;
  strategy.spatial_grid = config.spatial_grid;
  strategy.spatial_until = s.parallelism.spatial_until;
  strategy.model_degree = config.model_degree;
  strategy.stage_starts = s.parallelism.stage_starts;
  strategy.placement = s.parallelism.placement;
  strategy.micro_batches = config.micro_batches;
  strategy.schedule = config.schedule;
  strategy.tensor = config.tensor;
  strategy.shard = s.memory.shard;
  strategy.mini_batch = config.mini_batch;
  strategy.offload = s.memory.offload;
  strategy.workspace_limit_bytes = s.micro_batching.workspace_limit_bytes;
  return strategy;
}

std::vector<std::string> split_end_candidates(const ModelGraph& model) {
  std::vector<std::string> ends{""};
  for (const auto& layer : model.layers()) {
    if (layer.layer.kind == LayerKind::pooling) ends.push_back(layer.layer.name);
  }
  return ends;
}

std::vector<PlanCandidate> enumerate_candidates(const LoadedScenario& loaded,
                                                const PlanSpaceOptions& options) {
  const auto& s = loaded.scenario;
  const PlanStrategy own = scenario_strategy(loaded, 0);
  auto pinned = [&](const char* key) { return options.pinned.count(key) > 0; };
  const bool proportional = s.parallelism.data_split == DataSplit::proportional;
  const auto extents = spatial_extents(loaded.model);

  std::vector<std::string> ends = pinned(kUntil) ? std::vector<std::string>{own.spatial_until}
                                                 : split_end_candidates(loaded.model);
  std::vector<OffloadPolicy> offloads{OffloadPolicy::dyn};
  if (options.every_offload_policy) {
    offloads = {OffloadPolicy::none, OffloadPolicy::conv, OffloadPolicy::all};
  }
  // Offloading needs layer-by-layer allocation (memory.md).
  if (pinned(kOffload)) offloads = {own.offload};
  if (s.memory.allocation == MemoryAllocation::network_wide) offloads = {OffloadPolicy::none};
  std::vector<double> workspaces{own.workspace_limit_bytes};
  if (!pinned(kWorkspace) && !options.workspace_limits_bytes.empty()) {
    workspaces = options.workspace_limits_bytes;
  }

  std::vector<PlanCandidate> candidates;
  for (const auto gpus : options.gpus) {
    std::vector<std::int64_t> datas =
        pinned(kData) ? std::vector<std::int64_t>{own.data} : divisors(gpus);
    for (const auto data : datas) {
      if (gpus % data != 0) {
        throw InputError({s.file, 0, 0}, "--pin " + std::string(kData),
                         "the scenario's " + std::to_string(data) + " replicas do not divide " +
                             std::to_string(gpus) + " GPUs");
      }
      std::int64_t mini_batch = 0;
      if (options.mini_batch) {
        mini_batch = *options.mini_batch;
      } else {
        if (*options.global_batch % data != 0) continue;  // replicas must share it evenly
        mini_batch = *options.global_batch / data;
      }
      const std::int64_t per_replica = gpus / data;
      std::vector<std::int64_t> degrees;
      if (pinned(kDegree)) {
        degrees = {own.model_degree};
      } else {
        for (auto degree : divisors(per_replica)) {
          if (degree <= options.max_model_degree) degrees.push_back(degree);
        }
      }
      for (const auto degree : degrees) {
        if (per_replica % degree != 0) continue;
        std::vector<std::int64_t> tensors;
        if (pinned(kTensor)) {
          tensors = {own.tensor};
        } else {
          for (auto tensor : divisors(per_replica / degree)) {
            if (tensor <= options.max_tensor_degree) tensors.push_back(tensor);
          }
        }
        for (const auto tensor : tensors) {
          if ((per_replica / degree) % tensor != 0) continue;
          const std::int64_t parts = per_replica / degree / tensor;
          if (parts > options.max_spatial_parts && !pinned(kGrid)) continue;
          // Shares proportional to GPU speed are for replicas of one GPU (scenario_parser.cpp).
          if (proportional && per_replica > 1) continue;
          // What ZeRO may shard: over the GPUs holding a stage's same weights, and under a
          // pipeline only the optimizer state (the scenario loader's rule).
          std::vector<ShardLevel> shards{ShardLevel::none};
          if (pinned(kShard)) {
            shards = {own.shard};
          } else if (data * parts > 1) {
            shards = {ShardLevel::none, ShardLevel::optimizer};
            if (degree == 1) {
              shards.push_back(ShardLevel::gradients);
              shards.push_back(ShardLevel::weights);
            }
          }
          std::vector<std::vector<std::int64_t>> spatial;
          if (pinned(kGrid)) {
            if (own.config().spatial_parts() == parts) spatial = {own.spatial_grid};
          } else {
            spatial = grids_of(parts, extents);
          }
          // The pipeline through the stages: the micro-batches that divide the batch per replica
          // where there are several stages, one where there is one (pinned values everywhere);
          // one micro-batch runs alike under either schedule.
          std::vector<std::int64_t> splits{pinned(kMicroBatches) ? own.micro_batches : 1};
          if (degree > 1 && !pinned(kMicroBatches)) {
            splits.clear();
            for (auto split : divisors(mini_batch)) {
              if (split <= options.max_micro_batches) splits.push_back(split);
            }
          }
          std::vector<std::pair<std::int64_t, PipelineSchedule>> pipelines;
          for (auto split : splits) {
            if (pinned(kSchedule)) {
              pipelines.emplace_back(split, own.schedule);
            } else {
              pipelines.emplace_back(split, PipelineSchedule::gpipe);
              if (split > 1) pipelines.emplace_back(split, PipelineSchedule::one_f_one_b);
            }
          }
          for (const auto& grid : spatial) {
            // Where the split stops matters only where something is split.
            const auto& grid_ends =
                all_ones(grid) ? std::vector<std::string>{own.spatial_until} : ends;
            for (const auto& until : grid_ends) {
              for (const auto& [split, schedule] : pipelines) {
                for (const auto shard : shards) {
                  for (const auto offload : offloads) {
                    for (const auto workspace : workspaces) {
                      PlanStrategy strategy;
                      strategy.data = data;
                      strategy.spatial_grid = grid;
                      strategy.spatial_until = until;
                      strategy.model_degree = degree;
                      if (pinned(kDegree)) {
                        strategy.stage_starts = own.stage_starts;
                        strategy.placement = own.placement;
                      }
                      strategy.micro_batches = split;
                      strategy.schedule = schedule;
                      strategy.tensor = tensor;
                      strategy.shard = shard;
                      strategy.mini_batch = mini_batch;
                      strategy.offload = offload;
                      strategy.workspace_limit_bytes = workspace;
                      candidates.push_back({candidates.size(), std::move(strategy)});
                    }
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  if (candidates.empty()) {
    throw InputError({s.file, 0, 0}, options.mini_batch ? "--mini-batch" : "--global-batch",
                     "no strategy splits this batch over the GPUs asked for (with the pinned "
                     "keys); expected a batch some replica count divides");
  }
  return candidates;
}

}  // namespace tessera
