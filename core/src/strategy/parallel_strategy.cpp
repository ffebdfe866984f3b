#include "tessera/core/strategy/parallel_strategy.hpp"

#include <algorithm>
#include <numeric>

#include "tessera/core/common/integer_division.hpp"
#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/model/layer_kind_rules.hpp"
#include "tessera/core/model/shape_inference.hpp"
#include "tessera/core/strategy/table_copies.hpp"

namespace tessera {
namespace {

bool is_window(LayerKind kind) {
  return kind == LayerKind::convolution || kind == LayerKind::transposed_convolution ||
         kind == LayerKind::pooling;
}

struct WindowParams {
  AxisValues kernel, stride, padding, dilation;
};

WindowParams window_params(const Layer& layer, int rank) {
  if (layer.kind == LayerKind::pooling) {
    const auto& p = std::get<PoolingParams>(layer.params);
    return {p.kernel, p.stride, p.padding, AxisValues(static_cast<std::size_t>(rank), 1)};
  }
  const auto& p = std::get<ConvolutionParams>(layer.params);
  return {p.kernel, p.stride, p.padding, p.dilation};
}

// The first layer that cannot be split: one without spatial axes, or a sequence layer whose steps
// read other steps (an LSTM's recurrence, attention over the whole memory).
std::size_t find_spatial_end(const ModelGraph& model, const std::string& until, int rank) {
  const auto& layers = model.layers();
  std::size_t first_dense = layers.size();
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (layers[i].output_shape.spatial_rank() != rank ||
        depends_across_time(layers[i].layer.kind)) {
      first_dense = i;
      break;
    }
  }
  if (until.empty()) return first_dense;
  auto index = model.index_of(until);
  if (!index) {
    throw StrategyError("parallelism.spatial.until", "expected the name of a layer of model " +
                                                         model.name() + ", got '" + until + "'");
  }
  if (*index == 0) {
    throw StrategyError("parallelism.spatial.until",
                        "the input layer cannot end spatial parallelism: nothing would be split");
  }
  if (*index > first_dense) {
    const auto& stop = layers[first_dense];
    const std::string why =
        depends_across_time(stop.layer.kind)
            ? "the first whose time steps read other steps (" + to_string(stop.layer.kind) + ")"
            : "the first without spatial axes";
    throw StrategyError("parallelism.spatial.until",
                        "spatial parallelism must stop at or before layer '" + stop.layer.name +
                            "', " + why + "; got '" + until + "'");
  }
  return *index;
}

void check_divisible(const ResolvedLayer& layer, const TensorShape& shape,
                     const std::vector<std::int64_t>& grid, const std::string& what) {
  const auto axes = spatial_axis_names(shape.spatial_rank());
  for (std::size_t axis = 0; axis < grid.size(); ++axis) {
    if (shape.spatial[axis] % grid[axis] != 0) {
      throw StrategyError("parallelism.spatial.grid",
                          "layer '" + layer.layer.name + "' " + what + " extent " + axes[axis] +
                              "=" + std::to_string(shape.spatial[axis]) + " is not divisible by " +
                              std::to_string(grid[axis]) +
                              " partitions; split fewer ways or end spatial "
                              "parallelism earlier (parallelism.spatial.until)");
    }
  }
}

}  // namespace

std::int64_t ParallelConfig::spatial_parts() const {
  return std::accumulate(spatial_grid.begin(), spatial_grid.end(), std::int64_t{1},
                         std::multiplies<std::int64_t>());
}

std::string grid_to_string(const std::vector<std::int64_t>& grid) {
  if (grid.empty()) return "1";
  std::string text;
  for (auto parts : grid) text += (text.empty() ? "" : "x") + std::to_string(parts);
  return text;
}

namespace {

// First and last input planes that outputs [out_first, out_last] really read, tap by tap: with
// strides or dilations a window's hull may cover planes no tap touches.
struct PlaneRange {
  std::int64_t first = INT64_MAX;
  std::int64_t last = INT64_MIN;
};

PlaneRange planes_read(LayerKind kind, std::int64_t input, std::int64_t out_first,
                       std::int64_t out_last, std::int64_t kernel, std::int64_t stride,
                       std::int64_t padding, std::int64_t dilation) {
  PlaneRange range;
  for (std::int64_t tap = 0; tap < kernel; ++tap) {
    const std::int64_t offset = tap * dilation - padding;
    std::int64_t lo = 0, hi = 0;  // input planes this tap reads for the output range
    if (kind == LayerKind::transposed_convolution) {
      // Input i feeds output i*stride + offset.
      lo = std::max<std::int64_t>(ceil_div(out_first - offset, stride), 0);
      hi = std::min(floor_div(out_last - offset, stride), input - 1);
    } else {
      // Output o reads input o*stride + offset; keep the outputs whose tap lands inside.
      const std::int64_t o_lo = std::max(out_first, ceil_div(-offset, stride));
      const std::int64_t o_hi = std::min(out_last, floor_div(input - 1 - offset, stride));
      if (o_lo > o_hi) continue;
      lo = o_lo * stride + offset;
      hi = o_hi * stride + offset;
    }
    if (lo > hi) continue;
    range.first = std::min(range.first, lo);
    range.last = std::max(range.last, hi);
  }
  return range;
}

}  // namespace

Halo window_halo(LayerKind kind, std::int64_t input, std::int64_t output, std::int64_t parts,
                 std::int64_t kernel, std::int64_t stride, std::int64_t padding,
                 std::int64_t dilation) {
  Halo halo;
  if (parts <= 1) return halo;
  for (std::int64_t rank = 0; rank < parts; ++rank) {
    const Halo part =
        shard_window_halo(kind, input, output, parts, rank, kernel, stride, padding, dilation);
    halo.lower = std::max(halo.lower, part.lower);
    halo.upper = std::max(halo.upper, part.upper);
  }
  return halo;
}

PlaneSpan shard_planes(std::int64_t extent, std::int64_t parts, std::int64_t index) {
  const std::int64_t base = extent / parts, larger = extent % parts;
  return {index * base + std::min(index, larger), base + (index < larger ? 1 : 0)};
}

Halo shard_window_halo(LayerKind kind, std::int64_t input, std::int64_t output, std::int64_t parts,
                       std::int64_t index, std::int64_t kernel, std::int64_t stride,
                       std::int64_t padding, std::int64_t dilation) {
  Halo halo;
  if (parts <= 1) return halo;
  const PlaneSpan in = shard_planes(input, parts, index), out = shard_planes(output, parts, index);
  if (out.count == 0) return halo;
  const auto read = planes_read(kind, input, out.first, out.first + out.count - 1, kernel, stride,
                                padding, dilation);
  if (read.first > read.last) return halo;
  halo.lower = std::max<std::int64_t>(0, in.first - read.first);
  halo.upper = std::max<std::int64_t>(0, read.last - (in.first + in.count - 1));
  return halo;
}

namespace {

// Every layer's shard on the busiest GPU when a replica runs `batch` samples at once.
std::vector<LayerShard> shards_of(const ModelGraph& model, const ShardPlan& plan,
                                  std::int64_t batch, const std::vector<int>& stage,
                                  const std::vector<LayerTensorSplit>& tensor_plan) {
  const auto& layers = model.layers();
  const int rank = layers.front().output_shape.spatial_rank();
  const auto& grid = plan.config.spatial_grid;
  const std::int64_t parts = plan.config.spatial_parts();
  const std::int64_t unsplit_batch = parts > 1 ? (batch + parts - 1) / parts : batch;
  std::vector<LayerShard> shards;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const auto& layer = layers[i];
    LayerShard shard;
    shard.stage = stage[i];
    shard.spatially_split = parts > 1 && i < plan.spatial_end;
    shard.local_batch = shard.spatially_split ? batch : unsplit_batch;
    auto localize = [&](TensorShape shape) {
      shape.n = shard.local_batch;
      if (shard.spatially_split) {
        for (std::size_t axis = 0; axis < grid.size(); ++axis) shape.spatial[axis] /= grid[axis];
      }
      return shape;
    };
    if (shard.spatially_split) {
      check_divisible(layer, layer.output_shape, grid, "output");
      for (const auto& input : layer.input_shapes) check_divisible(layer, input, grid, "input");
    }
    // A split tensor's channels on one GPU of the tensor group (the busiest: rounded up).
    const std::int64_t tensor = plan.config.tensor;
    shard.tensor = tensor_plan[i];
    auto split_channels = [&](TensorShape shape, bool split) {
      if (split) shape.c = ceil_div(shape.c, tensor);
      return shape;
    };
    const TensorShape output = split_channels(layer.output_shape, shard.tensor.output_split);
    std::vector<TensorShape> inputs;
    for (std::size_t k = 0; k < layer.input_shapes.size(); ++k) {
      const bool arrives_split =
          tensor_plan[layer.input_indices[k]].output_split && !shard.tensor.gathered_inputs[k];
      inputs.push_back(split_channels(layer.input_shapes[k], arrives_split));
    }
    shard.parameters =
        rules_of(layer.layer.kind).parameters(shard.tensor.local_layer, inputs, output);
    shard.local_output = localize(output);
    for (const auto& input : inputs) shard.local_inputs.push_back(localize(input));
    if (!shard.local_inputs.empty()) shard.local_input_with_halo = shard.local_inputs.front();
    if (shard.spatially_split && is_window(layer.layer.kind)) {
      const auto w = window_params(layer.layer, rank);
      const auto axes = spatial_axis_names(rank);
      for (std::size_t axis = 0; axis < grid.size(); ++axis) {
        const Halo halo = window_halo(layer.layer.kind, layer.input_shapes[0].spatial[axis],
                                      layer.output_shape.spatial[axis], grid[axis], w.kernel[axis],
                                      w.stride[axis], w.padding[axis], w.dilation[axis]);
        const std::int64_t slab = shard.local_inputs.front().spatial[axis];
        if (halo.lower > slab || halo.upper > slab) {
          throw StrategyError("parallelism.spatial.grid",
                              "layer '" + layer.layer.name + "' needs a halo of " +
                                  std::to_string(std::max(halo.lower, halo.upper)) +
                                  " planes along " + axes[axis] +
                                  ", wider than the local slab of " + std::to_string(slab) +
                                  " planes; split fewer ways or end spatial parallelism earlier");
        }
        shard.input_halo.push_back(halo);
        shard.local_input_with_halo.spatial[axis] += halo.lower + halo.upper;
      }
    }
    shards.push_back(std::move(shard));
  }
  return shards;
}

}  // namespace

ShardPlan plan_shards(const ModelGraph& model, const ParallelConfig& config,
                      const std::string& spatial_until, const StagePlacement& placement) {
  const auto& layers = model.layers();
  const int rank = layers.front().output_shape.spatial_rank();
  ShardPlan plan;
  plan.config = config;
  if (plan.config.spatial_grid.empty()) {
    plan.config.spatial_grid.assign(static_cast<std::size_t>(rank), 1);
  }
  const auto& grid = plan.config.spatial_grid;
  if (static_cast<int>(grid.size()) != rank) {
    throw StrategyError("parallelism.spatial.grid",
                        "expected " + std::to_string(rank) + " entries (one per spatial axis " +
                            grid_to_string(std::vector<std::int64_t>(rank, 1)) + " of model " +
                            model.name() + "), got " + std::to_string(grid.size()));
  }
  const std::int64_t parts = plan.config.spatial_parts();
  // Checked even when nothing is split, so a misspelt layer name never goes unnoticed.
  const std::size_t spatial_end = find_spatial_end(model, spatial_until, rank);
  plan.spatial_end = parts > 1 ? spatial_end : 0;
  const auto stage = assign_stages(model, config.model_degree, placement);
  plan.stages = static_cast<int>(config.model_degree);
  const std::int64_t micro_batches = config.micro_batches;
  if (micro_batches < 1 || config.mini_batch % micro_batches != 0) {
    throw StrategyError("parallelism.model.micro_batches",
                        "expected a number of micro-batches that divides the mini-batch of " +
                            std::to_string(config.mini_batch) + ", got " +
                            std::to_string(micro_batches));
  }
  if (config.schedule == PipelineSchedule::one_f_one_b && !stages_form_a_pipeline(model, stage)) {
    throw StrategyError("parallelism.model.schedule",
                        "one-forward-one-backward needs stages that pass activations one way "
                        "(every layer's inputs on its stage or an earlier one); this placement "
                        "sends some back: use gpipe");
  }
  if (config.tensor < 1) {
    throw StrategyError("parallelism.tensor",
                        "expected a positive tensor degree, got " + std::to_string(config.tensor));
  }
  const auto tensor_plan = plan_tensor_splits(model, config.tensor);
  plan.layers = shards_of(model, plan, config.mini_batch, stage, tensor_plan);
  plan.micro_batch_layers =
      micro_batches == 1
          ? plan.layers
          : shards_of(model, plan, config.mini_batch / micro_batches, stage, tensor_plan);
  // A tied table's copy on another stage holds the owner's share of it (table_copies.hpp).
  const auto copies = table_copies(model, stage);
  for (auto* shards : {&plan.layers, &plan.micro_batch_layers}) {
    for (std::size_t i = 0; i < shards->size(); ++i) {
      if (copies.holds_copy(i)) (*shards)[i].parameters += (*shards)[copies.origin[i]].parameters;
    }
  }
  return plan;
}

ShardPlan micro_batch_plan(const ShardPlan& plan) {
  ShardPlan micro = plan;
  micro.layers = plan.micro_batch_layers;
  micro.config.mini_batch =
      plan.config.mini_batch / std::max<std::int64_t>(1, plan.config.micro_batches);
  micro.config.micro_batches = 1;
  return micro;
}

bool interior_overlaps_exchange(std::int64_t owned_planes, std::int64_t window_reach) {
  return owned_planes >= 3 * window_reach;
}

}  // namespace tessera
