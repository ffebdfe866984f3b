#include "tessera/core/step_program.hpp"

#include <algorithm>

#include "tessera/core/layer_cost.hpp"
#include "tessera/core/network_micro_batch_plan.hpp"

namespace tessera {
namespace {

bool is_window(LayerKind kind) {
  return kind == LayerKind::convolution || kind == LayerKind::transposed_convolution ||
         kind == LayerKind::pooling;
}

struct Window {
  AxisValues kernel, stride, padding, dilation;
};

Window window_of(const Layer& layer, int rank) {
  if (const auto* pool = std::get_if<PoolingParams>(&layer.params)) {
    return {pool->kernel, pool->stride, pool->padding,
            AxisValues(static_cast<std::size_t>(rank), 1)};
  }
  const auto& conv = std::get<ConvolutionParams>(layer.params);
  return {conv.kernel, conv.stride, conv.padding, conv.dilation};
}

// Bytes of one plane orthogonal to `axis` of a local tensor.
double plane_bytes(const TensorShape& local, int axis, DType dtype) {
  double elements = static_cast<double>(local.n * local.c);
  for (int a = 0; a < local.spatial_rank(); ++a) {
    if (a != axis) elements *= static_cast<double>(local.spatial[static_cast<std::size_t>(a)]);
  }
  return elements * static_cast<double>(dtype_bytes(dtype));
}

double tensor_bytes(const TensorShape& local, DType dtype) {
  return static_cast<double>(local.elements() * dtype_bytes(dtype));
}

class ProgramWriter {
 public:
  ProgramWriter(const ModelGraph& model, const ShardPlan& plan, const ComputeCostModel& costs,
                const NetworkMicroBatchPlan& micro_batching, const StepOptions& options, int stage)
      : model_(model),
        plan_(plan),
        costs_(costs),
        micro_batching_(micro_batching),
        options_(options) {
    program_.stage = stage;
    program_.parameters = stage_parameters(model, plan).at(static_cast<std::size_t>(stage));
  }

  StepProgram write() {
    const auto& layers = model_.layers();
    const bool holds_input = plan_.layers.front().stage == program_.stage;
    if (holds_input) read_next_sample();
    for (std::size_t i = 0; i < layers.size(); ++i) {
      if (plan_.layers[i].stage == program_.stage) forward(i);
    }
    for (std::size_t i = layers.size(); i-- > 0;) {
      if (plan_.layers[i].stage == program_.stage) backward(i);
    }
    flush_bucket();
    if (program_.allreduce_group_size > 1) {
      add({.kind = StepOpKind::gradient_wait,
           .category = OpCategory::allreduce,
           .label = "wait for gradient all-reduce"});
    }
    auto update = costs_.optimizer_time(program_.parameters, options_.dtype, options_.optimizer);
    add({.kind = StepOpKind::compute,
         .category = OpCategory::compute,
         .label = "optimizer update",
         .seconds = update.seconds,
         .provenance = update.provenance});
    if (holds_input && options_.prefetch) {
      add({.kind = StepOpKind::read_wait,
           .category = OpCategory::io,
           .label = "wait for the next sample's read"});
    }
    return program_;
  }

 private:
  void add(StepOp op) { program_.ops.push_back(std::move(op)); }

  void read_next_sample() {
    const auto& input = plan_.layers.front();
    double bytes = tensor_bytes(input.local_output, options_.dtype);
    if (!options_.read_sub_volume) bytes *= static_cast<double>(plan_.config.spatial_parts());
    add({.kind = StepOpKind::read_start,
         .category = OpCategory::io,
         .label = "read the next sample's shard",
         .bytes = bytes});
    if (!options_.prefetch) {
      add({.kind = StepOpKind::read_wait,
           .category = OpCategory::io,
           .label = "wait for the read"});
    }
  }

  void compute(std::size_t i, Direction direction, double fraction, const std::string& suffix) {
    const auto& layer = model_.layers()[i];
    const auto& shard = plan_.layers[i];
    auto cost = costs_.layer_time(layer.layer, shard.local_inputs, shard.local_output,
                                  shard.local_batch, options_.dtype, direction);
    MicroBatchPlan micro_batches;
    if (const auto* kernel = micro_batching_.find(i, direction)) {
      cost = {kernel->plan.seconds(), kernel->provenance};
      micro_batches = kernel->plan;
    }
    if (cost.seconds <= 0) return;
    add({.kind = StepOpKind::compute,
         .category = OpCategory::compute,
         .label = layer.layer.name + " " + to_string(direction) + suffix,
         .layer = i,
         .direction = direction,
         .seconds = cost.seconds * fraction,
         .provenance = cost.provenance,
         .micro_batches = std::move(micro_batches)});
  }

  // Forward with halo exchanges along every split axis; the interior overlaps the exchange when
  // the local slab is at least three stencils deep.
  void forward_with_halos(std::size_t i) {
    const auto& layer = model_.layers()[i];
    const auto& shard = plan_.layers[i];
    const int rank = layer.output_shape.spatial_rank();
    std::vector<int> exchanges;
    double boundary_fraction = 0;
    bool overlap = options_.overlap_halo;
    if (shard.spatially_split && is_window(layer.layer.kind)) {
      const auto w = window_of(layer.layer, rank);
      for (int axis = 0; axis < rank; ++axis) {
        const auto a = static_cast<std::size_t>(axis);
        const Halo halo = shard.input_halo[a];
        if (plan_.config.spatial_grid[a] <= 1 || halo.lower + halo.upper == 0) continue;
        const double plane = plane_bytes(shard.local_inputs[0], axis, options_.dtype);
        // My lower neighbour needs my first planes for its upper halo, and vice versa.
        exchanges.push_back(halo_start(i, axis, "halo", plane * static_cast<double>(halo.upper),
                                       plane * static_cast<double>(halo.lower)));
        const std::int64_t extent = shard.local_output.spatial[a];
        const std::int64_t boundary = std::min<std::int64_t>(extent, halo.lower + halo.upper);
        boundary_fraction = std::max(boundary_fraction,
                                     static_cast<double>(boundary) / static_cast<double>(extent));
        overlap = overlap && extent >= 3 * w.kernel[a];
      }
    }
    if (exchanges.empty()) {
      compute(i, Direction::forward, 1.0, "");
      return;
    }
    if (overlap) compute(i, Direction::forward, 1.0 - boundary_fraction, " (interior)");
    halo_waits(i, exchanges);
    compute(i, Direction::forward, overlap ? boundary_fraction : 1.0, overlap ? " (boundary)" : "");
  }

  // Backward as the real backend's partitioned kernels run it (kernels/include/tessera/kernels/
  // partitioned_convolution.hpp): backward-data covers the shard's whole haloed input window, the
  // input gradient that landed in the halo planes goes back to the neighbours owning them (input
  // channels, the adjoint of the forward fill), and backward-filter runs while it flies.
  void backward_with_halos(std::size_t i) {
    const auto& layer = model_.layers()[i];
    const auto& shard = plan_.layers[i];
    const int rank = layer.output_shape.spatial_rank();
    // A layer reading only the samples computes no input gradient (the real backend skips it).
    const bool input_gradient = std::any_of(
        layer.input_indices.begin(), layer.input_indices.end(), [&](std::size_t producer) {
          return model_.layers()[producer].layer.kind != LayerKind::input;
        });
    std::vector<std::pair<int, std::pair<double, double>>> returns;  // axis, bytes down/up
    double window_factor = 1;
    if (input_gradient && shard.spatially_split && is_window(layer.layer.kind)) {
      for (int axis = 0; axis < rank; ++axis) {
        const auto a = static_cast<std::size_t>(axis);
        const Halo halo = shard.input_halo[a];
        if (plan_.config.spatial_grid[a] <= 1 || halo.lower + halo.upper == 0) continue;
        const auto owned = static_cast<double>(shard.local_inputs[0].spatial[a]);
        window_factor *= (owned + static_cast<double>(halo.lower + halo.upper)) / owned;
        const double plane = plane_bytes(shard.local_inputs[0], axis, options_.dtype);
        returns.push_back(
            {axis,
             {plane * static_cast<double>(halo.lower), plane * static_cast<double>(halo.upper)}});
      }
    }
    if (input_gradient) compute(i, Direction::backward_data, window_factor, "");
    std::vector<int> exchanges;
    for (const auto& [axis, bytes] : returns) {
      exchanges.push_back(halo_start(i, axis, "gradient halo", bytes.first, bytes.second));
    }
    compute(i, Direction::backward_filter, 1.0, "");
    halo_waits(i, exchanges);
  }

  int halo_start(std::size_t i, int axis, const std::string& what, double bytes_to_lower,
                 double bytes_to_upper) {
    const auto& layer = model_.layers()[i];
    const int id = next_exchange_++;
    add({.kind = StepOpKind::halo_start,
         .category = OpCategory::halo,
         .label =
             layer.layer.name + " " + what + " " +
             spatial_axis_names(layer.output_shape.spatial_rank())[static_cast<std::size_t>(axis)],
         .layer = i,
         .axis = axis,
         .bytes_to_lower = bytes_to_lower,
         .bytes_to_upper = bytes_to_upper,
         .exchange = id});
    return id;
  }

  void halo_waits(std::size_t i, const std::vector<int>& exchanges) {
    for (int id : exchanges) {
      add({.kind = StepOpKind::halo_wait,
           .category = OpCategory::halo,
           .label = model_.layers()[i].layer.name + " halo wait",
           .layer = i,
           .exchange = id});
    }
  }

  void batch_norm_statistics(std::size_t i, const std::string& when) {
    const auto& layer = model_.layers()[i];
    const auto* bn = std::get_if<BatchNormParams>(&layer.layer.params);
    if (!bn || !bn->global_statistics || !plan_.layers[i].spatially_split) return;
    // Sums and sums of squares per channel, in float32.
    add({.kind = StepOpKind::group_allreduce,
         .category = OpCategory::other_communication,
         .label = layer.layer.name + " " + when + " statistics",
         .layer = i,
         .bytes = 2.0 * static_cast<double>(layer.output_shape.c) * 4.0});
  }

  void redistribute(std::size_t i, const std::string& what) {
    if (plan_.config.spatial_parts() <= 1 || i != plan_.spatial_end || i == 0) return;
    const auto& producer = plan_.layers[model_.layers()[i].input_indices.front()];
    // Each GPU of the group goes on with local_batch whole samples (ceil(mini-batch / parts): with
    // fewer samples than parts, several GPUs hold the same one) and receives every peer's shard
    // of them: a true all-to-all when the samples spread evenly, an all-gather for one sample.
    const double samples_kept = static_cast<double>(plan_.layers[i].local_batch);
    const double samples_held = static_cast<double>(producer.local_batch);
    add({.kind = StepOpKind::group_alltoall,
         .category = OpCategory::other_communication,
         .label = "redistribute " + what + " before " + model_.layers()[i].layer.name,
         .layer = i,
         .bytes =
             tensor_bytes(producer.local_output, options_.dtype) * samples_kept / samples_held});
  }

  // Tensors between this stage and another: activations forward, their gradients backward.
  void stage_transfers(std::size_t i, bool forward_pass) {
    const auto& layer = model_.layers()[i];
    for (auto producer : layer.input_indices) {
      const int from = plan_.layers[producer].stage;
      if (from == program_.stage) continue;
      const double bytes = tensor_bytes(plan_.layers[producer].local_output, options_.dtype);
      add({.kind = forward_pass ? StepOpKind::stage_recv : StepOpKind::stage_send,
           .category = OpCategory::other_communication,
           .label = std::string(forward_pass ? "receive " : "send gradient of ") +
                    model_.layers()[producer].layer.name,
           .layer = i,
           .bytes = bytes,
           .peer_stage = from});
    }
  }

  void stage_outputs(std::size_t i, bool forward_pass) {
    for (auto consumer : model_.consumers_of(i)) {
      const int to = plan_.layers[consumer].stage;
      if (to == program_.stage) continue;
      const double bytes = tensor_bytes(plan_.layers[i].local_output, options_.dtype);
      add({.kind = forward_pass ? StepOpKind::stage_send : StepOpKind::stage_recv,
           .category = OpCategory::other_communication,
           .label = std::string(forward_pass ? "send " : "receive gradient of ") +
                    model_.layers()[i].layer.name,
           .layer = i,
           .bytes = bytes,
           .peer_stage = to});
    }
  }

  void forward(std::size_t i) {
    stage_transfers(i, true);
    redistribute(i, "activations");
    forward_with_halos(i);
    batch_norm_statistics(i, "forward");
    stage_outputs(i, true);
  }

  void backward(std::size_t i) {
    const auto& layer = model_.layers()[i];
    stage_outputs(i, false);
    batch_norm_statistics(i, "backward");
    backward_with_halos(i);
    const auto parameters = static_cast<double>(parameter_count(layer));
    if (parameters > 0) {
      bucket_bytes_ += parameters * static_cast<double>(dtype_bytes(options_.dtype));
      if (bucket_bytes_ >= options_.gradient_bucket_bytes) flush_bucket();
    }
    redistribute(i, "gradients");
    stage_transfers(i, false);
  }

  void flush_bucket() {
    if (bucket_bytes_ <= 0) return;
    if (program_.allreduce_group_size > 1) {
      add({.kind = StepOpKind::gradient_allreduce,
           .category = OpCategory::allreduce,
           .label = "gradient bucket " + std::to_string(buckets_),
           .bytes = bucket_bytes_});
      if (!options_.overlap_gradient_allreduce) {
        add({.kind = StepOpKind::gradient_wait,
             .category = OpCategory::allreduce,
             .label = "wait for gradient bucket " + std::to_string(buckets_)});
      }
      ++buckets_;
    }
    bucket_bytes_ = 0;
  }

 public:
  void set_group_size(std::int64_t size) { program_.allreduce_group_size = size; }

 private:
  const ModelGraph& model_;
  const ShardPlan& plan_;
  const ComputeCostModel& costs_;
  const NetworkMicroBatchPlan& micro_batching_;
  const StepOptions& options_;
  StepProgram program_;
  double bucket_bytes_ = 0;
  int buckets_ = 0;
  int next_exchange_ = 0;
};

}  // namespace

std::string to_string(OpCategory category) {
  switch (category) {
    case OpCategory::compute:
      return "compute";
    case OpCategory::halo:
      return "halo";
    case OpCategory::allreduce:
      return "allreduce";
    case OpCategory::other_communication:
      return "other_comm";
    case OpCategory::io:
      return "io";
    case OpCategory::offload:
      return "offload";
  }
  return "compute";
}

std::string to_string(StepOpKind kind) {
  static const char* const names[] = {"compute",         "halo_start",         "halo_wait",
                                      "group_allreduce", "group_alltoall",     "stage_send",
                                      "stage_recv",      "gradient_allreduce", "gradient_wait",
                                      "read_start",      "read_wait"};
  return names[static_cast<int>(kind)];
}

std::vector<StepProgram> build_step_programs(const ModelGraph& model, const ShardPlan& plan,
                                             const ComputeCostModel& costs,
                                             const StepOptions& options) {
  std::vector<StepProgram> programs;
  const auto micro_batching = plan_network(model, plan, costs, options.dtype);
  for (int stage = 0; stage < plan.stages; ++stage) {
    ProgramWriter writer(model, plan, costs, micro_batching, options, stage);
    writer.set_group_size(plan.config.data * plan.config.spatial_parts());
    programs.push_back(writer.write());
  }
  return programs;
}

std::vector<double> stage_parameters(const ModelGraph& model, const ShardPlan& plan) {
  std::vector<double> per_stage(static_cast<std::size_t>(std::max(1, plan.stages)), 0.0);
  for (std::size_t i = 0; i < model.layers().size(); ++i) {
    per_stage.at(static_cast<std::size_t>(plan.layers[i].stage)) +=
        static_cast<double>(parameter_count(model.layers()[i]));
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
      if (op.kind != StepOpKind::compute) continue;
      if (op.layer >= layers.size()) {
        program_update += op.seconds;
        continue;
      }
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
