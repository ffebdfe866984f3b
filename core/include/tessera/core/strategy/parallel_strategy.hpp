#pragma once
// How one sweep point splits the model over GPUs: data-parallel replicas, a spatial grid over
// (D,) H, W for the layers before `until`, model-parallel stages (stage_placement.hpp) through
// which micro-batches of the mini-batch flow as a pipeline, and tensor groups that split each
// layer's weights (tensor_split.hpp). For every layer it gives the shard the busiest GPU runs, for
// the whole mini-batch and for one micro-batch, and the halo planes it needs from neighbours.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/core/model/model_graph.hpp"
#include "tessera/core/strategy/pipeline_schedule.hpp"
#include "tessera/core/strategy/stage_placement.hpp"
#include "tessera/core/strategy/tensor_split.hpp"

namespace tessera {

struct ParallelConfig {
  std::int64_t data = 1;
  std::vector<std::int64_t> spatial_grid;  // one entry per spatial axis of the model
  std::int64_t model_degree = 1;
  std::int64_t mini_batch = 1;     // samples per data-parallel replica
  std::int64_t micro_batches = 1;  // the mini-batch split for the pipeline of model stages
  PipelineSchedule schedule = PipelineSchedule::gpipe;
  std::int64_t tensor = 1;  // GPUs of a tensor group, splitting each layer (tensor_split.hpp)

  std::int64_t spatial_parts() const;
  std::int64_t gpus_per_replica() const { return spatial_parts() * model_degree * tensor; }
  std::int64_t gpus() const { return data * gpus_per_replica(); }
  std::int64_t global_batch() const { return data * mini_batch; }
};

std::string grid_to_string(const std::vector<std::int64_t>& grid);  // "4x1x1"

// Planes a shard needs from its lower and upper neighbour along one axis.
struct Halo {
  std::int64_t lower = 0;
  std::int64_t upper = 0;
  bool operator==(const Halo&) const = default;
};

struct LayerShard {
  bool spatially_split = false;
  int stage = 0;                 // model-parallel stage holding the layer
  std::int64_t local_batch = 0;  // samples on the busiest GPU
  TensorShape local_output;      // shard of the busiest GPU (batch in n)
  std::vector<TensorShape> local_inputs;
  std::vector<Halo> input_halo;       // per spatial axis, for sliding-window layers
  TensorShape local_input_with_halo;  // first input enlarged by its halo planes
  LayerTensorSplit tensor;            // the split over the tensor group and the layer it runs
  std::int64_t parameters = 0;        // the weights one GPU of the tensor group holds
};

struct ShardPlan {
  ParallelConfig config;
  std::size_t spatial_end = 0;  // index of the first layer that runs unsplit
  std::vector<LayerShard> layers;
  std::vector<LayerShard> micro_batch_layers;  // the same for one micro-batch
  int stages = 1;
};

// A strategy that does not fit the model; `key` is the scenario key to blame.
class StrategyError : public std::runtime_error {
 public:
  StrategyError(std::string key, const std::string& problem)
      : std::runtime_error(problem), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

// spatial_until: first unsplit layer ("" = the first layer without spatial axes, or none).
// placement: the stages (stage_placement.hpp; empty: contiguous, balanced by its layer_seconds,
// or by forward FLOPs without them).
// Throws StrategyError for micro-batches that do not divide the mini-batch, and for a
// one-forward-one-backward schedule over stages that pass activations back.
ShardPlan plan_shards(const ModelGraph& model, const ParallelConfig& config,
                      const std::string& spatial_until, const StagePlacement& placement);

// The plan of one micro-batch of the pipeline: its layers are `plan`'s micro_batch_layers and its
// mini-batch the micro-batch (the plan itself when there is one micro-batch).
ShardPlan micro_batch_plan(const ShardPlan& plan);

// Halo one shard of `parts` along an axis needs for a sliding window (conv, pool, transposed
// conv) whose input extent is `input` and output extent `output`.
Halo window_halo(LayerKind kind, std::int64_t input, std::int64_t output, std::int64_t parts,
                 std::int64_t kernel, std::int64_t stride, std::int64_t padding,
                 std::int64_t dilation);

// Whether a shard of a split window layer computes the outputs that need no halo while its
// halos fly: only when each exchanged axis holds at least three window reaches (dilated kernel
// extents) of its own planes, as the reference runtime decides; a thinner interior hides little
// and costs its staging copies. The step program decides with it, the kernels follow.
bool interior_overlaps_exchange(std::int64_t owned_planes, std::int64_t window_reach);

// Planes [first, first + count) of part `index` when an axis of `extent` planes is split `parts`
// ways: the first extent % parts parts hold one plane more (exact division, as plan_shards
// requires, makes every part equal).
struct PlaneSpan {
  std::int64_t first = 0;
  std::int64_t count = 0;
};
PlaneSpan shard_planes(std::int64_t extent, std::int64_t parts, std::int64_t index);

// Halo of part `index` alone, input and output both split by shard_planes (the real backend's
// uneven shards); window_halo is the widest of these over the parts of an evenly split axis.
Halo shard_window_halo(LayerKind kind, std::int64_t input, std::int64_t output, std::int64_t parts,
                       std::int64_t index, std::int64_t kernel, std::int64_t stride,
                       std::int64_t padding, std::int64_t dilation);

}  // namespace tessera
