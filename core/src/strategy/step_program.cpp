#include "tessera/core/strategy/step_program.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "halo_geometry.hpp"
#include "halo_ops.hpp"
#include "layer_messages.hpp"
#include "memory_ops.hpp"
#include "tessera/core/micro_batching/network_micro_batch_plan.hpp"
#include "tessera/core/model/input_gradients.hpp"
#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/model/layer_kind_rules.hpp"
#include "tessera/core/strategy/table_copies.hpp"
#include "window_op_plans.hpp"

namespace tessera {
namespace {

// The share of a batch-norm pass spent on its statistics (the rest normalises), by the bytes
// each part moves: forward reads x for the sums, then reads x and writes y; backward reads x and
// dy for the sums, then reads both and writes dx.
constexpr double kStatisticsShareForward = 1.0 / 3.0;
constexpr double kStatisticsShareBackward = 2.0 / 5.0;
// Per channel, the sum and the sum of squares (forward) or of dy and dy * x_hat (backward), in
// double precision as the kernels accumulate them.
constexpr double kStatisticsBytesPerChannel = 2 * 8;

std::string part_suffix(StepPart part) {
  return part == StepPart::whole ? "" : " (" + to_string(part) + ")";
}

class ProgramWriter {
 public:
  ProgramWriter(const ModelGraph& model, const ShardPlan& plan, const ComputeCostModel& costs,
                const NetworkMicroBatchPlan& micro_batching, const StepOptions& options, int stage)
      : model_(model),
        whole_plan_(plan),
        plan_(micro_batch_plan(plan)),
        costs_(costs),
        micro_batching_(micro_batching),
        options_(options),
        memory_(plan_stage_memory(model, plan, stage,
                                  {.dtype = options.dtype,
                                   .optimizer = options.optimizer,
                                   .offload = options.offload.policy,
                                   .allocation = options.allocation,
                                   .shard = options.shard,
                                   .recompute = options.recompute,
                                   .workspace_bytes = options.workspace_bytes,
                                   .prefetch = options.prefetch,
                                   .gradient_bucket_bytes = options.gradient_bucket_bytes},
                                  options.offload)),
        messages_{model, plan_, stage, options.dtype},
        copies_(table_copies(model, plan)),
        segment_end_(memory_.recomputed_segment_end) {
    program_.stage = stage;
    program_.parameters = stage_parameters(model, plan).at(static_cast<std::size_t>(stage));
    program_.allreduce_group_size = plan.config.data * plan.config.spatial_parts();
    program_.stages_gradients =
        stages_gradients(options.shard, program_.allreduce_group_size, plan.config.micro_batches);
  }

  StepProgram write() {
    const auto& layers = model_.layers();
    const bool holds_input =
        plan_.layers.front().stage == program_.stage && options_.input_source != InputSource::none;
    memory_events(memory_.at_start);
    if (holds_input) read_next_sample();
    // The micro-batches flow through the stages as the schedule says; gradients add up over
    // them, and go to the all-reduce during the last backward pass.
    const auto& config = whole_plan_.config;
    const auto passes =
        pipeline_passes(program_.stage, whole_plan_.stages, config.micro_batches, config.schedule);
    std::optional<std::size_t> first_backward;
    std::size_t last_backward = 0;
    for (std::size_t p = 0; p < passes.size(); ++p) {
      if (passes[p].forward) continue;
      if (!first_backward) first_backward = p;
      last_backward = p;
    }
    if (first_backward) first_backward_micro_batch_ = passes[*first_backward].micro_batch;
    for (std::size_t p = 0; p < passes.size(); ++p) {
      micro_batch_ = passes[p].micro_batch;
      last_backward_pass_ = p == last_backward;
      if (passes[p].forward) {
        for (std::size_t i = 0; i < layers.size(); ++i) {
          if (plan_.layers[i].stage == program_.stage) forward(i);
        }
      } else {
        for (std::size_t i = layers.size(); i-- > 0;) {
          if (plan_.layers[i].stage == program_.stage) backward(i);
        }
      }
    }
    micro_batch_ = 0;
    memory_events(memory_.at_end);
    flush_bucket();
    if (program_.allreduce_group_size > 1 && !program_.buckets.empty()) {
      add({.kind = StepOpKind::gradient_wait,
           .category = OpCategory::allreduce,
           .label = "wait for gradient all-reduce"});
    }
    sum_table_copies();
    // Sharded (ZeRO), each GPU updates its share of the weights, and where it holds them whole
    // between steps, gathers the others' updated shares.
    const double updated = sharded(ShardLevel::optimizer)
                               ? program_.parameters / static_cast<double>(shard_ways())
                               : program_.parameters;
    auto update = costs_.optimizer_time(updated, options_.dtype, options_.optimizer);
    add({.kind = StepOpKind::update,
         .category = OpCategory::compute,
         .label = sharded(ShardLevel::optimizer) ? "optimizer update of this GPU's shard"
                                                 : "optimizer update",
         .seconds = update.seconds,
         .provenance = update.provenance,
         .flops = update.flops,
         .memory_bytes = update.bytes});
    if (sharded(ShardLevel::optimizer) && !sharded(ShardLevel::weights)) {
      gather_weights(SIZE_MAX, program_.parameters, "gather the updated weights");
    }
    if (holds_input && options_.prefetch) {
      add({.kind = StepOpKind::read_wait,
           .category = OpCategory::io,
           .label = "wait for the next sample's read"});
    }
    return program_;
  }

 private:
  void add(StepOp op) {
    op.micro_batch = micro_batch_;
    if (recomputing_) {
      op.recomputed = true;
      op.label += " (recompute)";
    }
    if (whole_plan_.config.micro_batches > 1 && op.layer != SIZE_MAX &&
        op.kind != StepOpKind::gradient_allreduce) {
      op.label += " [micro-batch " + std::to_string(micro_batch_) + "]";
    }
    program_.ops.push_back(std::move(op));
  }

  const Layer& layer_of(std::size_t i) const { return model_.layers()[i].layer; }

  // A tied table held on several stages: the holders sum their gradients once the data-parallel
  // sums are in, so that every copy takes the same update (table_copies.hpp).
  void sum_table_copies() {
    for (std::size_t i = 0; i < model_.layers().size(); ++i) {
      const auto& stages = copies_.stages[i];
      if (stages.size() < 2 || whole_plan_.layers[i].stage != program_.stage) continue;
      program_.table_stages[i] = stages;
      add({.kind = StepOpKind::group_allreduce,
           .category = OpCategory::allreduce,
           .label = layer_of(i).name + " table gradients over the stages holding it",
           .layer = i,
           // The table's, which the owner holds alone (a copy's holder may keep a bias beside it).
           .bytes = static_cast<double>(whole_plan_.layers[copies_.origin[i]].parameters) *
                    static_cast<double>(dtype_bytes(options_.dtype)),
           .group = CollectiveGroup::table});
    }
  }

  // The GPUs summing this stage's gradients, over which memory.shard splits what it names.
  std::int64_t shard_ways() const { return program_.allreduce_group_size; }
  bool sharded(ShardLevel level) const { return options_.shard >= level && shard_ways() > 1; }

  // An all-gather over the stage group of `parameters` weights (ZeRO): a layer's before its
  // passes with sharded weights, or every weight after the update.
  void gather_weights(std::size_t layer, double parameters, const std::string& label) {
    add({.kind = StepOpKind::group_allgather,
         .category = OpCategory::allreduce,
         .label = label,
         .layer = layer,
         .bytes = parameters * static_cast<double>(dtype_bytes(options_.dtype)),
         .group = CollectiveGroup::stage});
  }

  // A tied layer reads its table holder's weights, gathered for its passes as for the holder's,
  // and gathers those it has beside the table (BERT's decoder bias) too.
  void gather_layer_weights(std::size_t i) {
    if (!sharded(ShardLevel::weights)) return;
    const std::size_t holder = copies_.holder.at(i);
    if (plan_.layers[holder].parameters > 0) {
      gather_weights(
          holder, static_cast<double>(plan_.layers[holder].parameters),
          layer_of(i).name + (holder == i ? " gathers its weights"
                                          : " gathers " + layer_of(holder).name + "'s table"));
    }
    if (holder != i && plan_.layers[i].parameters > 0) {
      gather_weights(i, static_cast<double>(plan_.layers[i].parameters),
                     layer_of(i).name + " gathers its weights beside the table");
    }
  }

  // The whole step's samples, whatever the micro-batches: the step reads them together, as the
  // real backend's source does.
  void read_next_sample() {
    const auto& input = whole_plan_.layers.front();
    double bytes = static_cast<double>(input.local_output.elements()) *
                   static_cast<double>(stored_dtype_bytes(options_.stored_dtype));
    if (!options_.read_sub_volume) bytes *= static_cast<double>(plan_.config.spatial_parts());
    add({.kind = StepOpKind::read_start,
         .category = OpCategory::io,
         .label = "read the next sample's shard from " + to_string(options_.input_source),
         .bytes = bytes,
         .source = options_.input_source,
         .samples = input.local_batch});
    if (!options_.prefetch) {
      add({.kind = StepOpKind::read_wait,
           .category = OpCategory::io,
           .label = "wait for the read"});
    }
  }

  // Every layer but the input runs each pass it has, whatever its time: the program says what
  // runs, and a kernel too cheap to time still runs.
  void compute(std::size_t i, Direction direction, StepPart part, double fraction) {
    const auto& layer = model_.layers()[i];
    const auto& shard = plan_.layers[i];
    auto cost = costs_.layer_time(shard.tensor.local_layer, shard.local_inputs, shard.local_output,
                                  shard.local_batch, options_.dtype, direction);
    MicroBatchPlan micro_batches;
    if (const auto* kernel = micro_batching_.find(i, direction)) {
      cost.seconds = kernel->plan.seconds();  // the same work, in micro-batches
      cost.provenance = kernel->provenance;
      micro_batches = kernel->plan;
    }
    StepOp op{.kind = StepOpKind::compute,
              .category = OpCategory::compute,
              .label = layer.layer.name + " " + to_string(direction) + part_suffix(part),
              .layer = i,
              .direction = direction,
              .part = part,
              .seconds = std::max(0.0, cost.seconds) * fraction,
              .provenance = cost.provenance,
              .micro_batches = micro_batches,
              .flops = cost.flops * fraction,
              .memory_bytes = cost.bytes * fraction};
    if (costs_.profiles() != nullptr && runs_window_kernels(layer.layer, shard.spatially_split)) {
      plan_op_windows(op, layer, plan_,
                      micro_batches.micro_batches.empty() ? nullptr : &micro_batches, costs_,
                      options_.dtype);
    }
    add(std::move(op));
  }

  // Forward of a split window layer as its partitioned kernel runs it: the first axis's halos
  // start, the interior (where it pays) is computed meanwhile, then the other axes are exchanged
  // one after another (a face message carries the corners the earlier axes filled), then the
  // boundary, or the whole shard where nothing overlapped.
  void forward_window(std::size_t i, const std::vector<int>& axes) {
    const bool overlap = options_.overlap_halo && interior_overlaps_halos(model_, plan_, i, axes);
    const double boundary = boundary_fraction(plan_.layers[i], axes);
    halo(i, axes.front(), Direction::forward,
         window_load_time(plan_.layers[i], options_.dtype, costs_).seconds);
    if (overlap) compute(i, Direction::forward, StepPart::interior, 1.0 - boundary);
    halo_wait(i);
    for (std::size_t k = 1; k < axes.size(); ++k) {
      halo(i, axes[k], Direction::forward);
      halo_wait(i);
    }
    if (overlap) {
      compute(i, Direction::forward, StepPart::boundary, boundary);
    } else {
      compute(i, Direction::forward, StepPart::whole, 1.0);
    }
  }

  // Backward as the partitioned kernels run it (kernels/include/tessera/kernels/
  // partitioned_convolution.hpp): backward-data covers the shard's whole haloed input window, the
  // input gradient that landed in the halo planes goes back to the neighbours owning them (the
  // adjoint of the forward fill, axes in reverse order), and backward-filter runs while the
  // first axis's gradients fly.
  void backward_window(std::size_t i, std::vector<int> axes, bool input_gradient, bool parameters) {
    std::reverse(axes.begin(), axes.end());
    if (input_gradient) {
      compute(i, Direction::backward_data, StepPart::whole,
              haloed_window_factor(plan_.layers[i], axes));
      halo(i, axes.front(), Direction::backward_data);
    }
    if (parameters) compute(i, Direction::backward_filter, StepPart::whole, 1.0);
    if (!input_gradient) return;
    // The last wait ends the pass, where the window's owned gradient is stored.
    const double store_seconds = window_store_time(plan_.layers[i], options_.dtype, costs_).seconds;
    for (std::size_t k = 0; k < axes.size(); ++k) {
      if (k > 0) halo(i, axes[k], Direction::backward_data);
      halo_wait(i, k + 1 == axes.size() ? store_seconds : 0.0);
    }
  }

  // One axis's exchange (halo_ops.hpp); its wait comes where the writer calls halo_wait.
  // `window_seconds`: what the start or the wait copies besides the faces (halo_copies.hpp).
  void halo(std::size_t i, int axis, Direction direction, double window_seconds = 0) {
    auto ops = halo_exchange_ops(model_.layers()[i], plan_.layers[i], i, axis, direction,
                                 next_exchange_++, options_.dtype, costs_);
    ops.start.window_seconds = window_seconds;
    add(std::move(ops.start));
    open_wait_ = std::move(ops.wait);
  }

  void halo_wait(std::size_t i, double window_seconds = 0) {
    if (open_wait_.layer != i) throw std::logic_error("a halo wait without its exchange");
    open_wait_.window_seconds = window_seconds;
    add(std::move(open_wait_));
    open_wait_ = {};
  }

  // Batch-norm sums its statistics over the spatial group where the layer is split (each GPU
  // holds planes of the samples) and after the redistribution (the group's GPUs share the
  // samples), when it uses global statistics; over every GPU where the scenario synchronises
  // them across the replicas too.
  bool sums_over_group(std::size_t i) const {
    const auto* bn = std::get_if<BatchNormParams>(&layer_of(i).params);
    if (!bn || !bn->global_statistics) return false;
    return plan_.config.spatial_parts() > 1 ||
           (options_.batch_norm_over_replicas && plan_.config.data > 1);
  }

  void batch_norm_over_group(std::size_t i, Direction direction) {
    const double share =
        direction == Direction::forward ? kStatisticsShareForward : kStatisticsShareBackward;
    compute(i, direction, StepPart::statistics, share);
    add({.kind = StepOpKind::group_allreduce,
         .category = OpCategory::other_communication,
         .label = layer_of(i).name + (direction == Direction::forward ? " forward" : " backward") +
                  " statistics",
         .layer = i,
         .direction = direction,
         .bytes = kStatisticsBytesPerChannel * static_cast<double>(plan_.layers[i].local_output.c),
         .group = options_.batch_norm_over_replicas && plan_.config.data > 1
                      ? CollectiveGroup::stage
                      : CollectiveGroup::spatial});
    compute(i, direction, StepPart::apply, 1.0 - share);
  }

  void add_all(std::vector<StepOp> ops) {
    for (auto& op : ops) add(std::move(op));
  }

  // The memory plan's events at one moment of a layer's pass, as ops.
  void memory_events(const std::vector<MemoryEvent>& events) {
    for (auto& op : memory_ops(model_, events, micro_batch_, options_.overlap_memory_copies)) {
      add(std::move(op));
    }
  }

  void forward(std::size_t i) {
    memory_events(memory_.at(i, MemoryMoment::before_forward));
    forward_pass(i);
    memory_events(memory_.at(i, MemoryMoment::after_forward));
  }

  void backward(std::size_t i) {
    memory_events(memory_.at(i, MemoryMoment::before_backward));
    backward_pass(i);
    memory_events(memory_.at(i, MemoryMoment::after_backward));
  }

  void forward_pass(std::size_t i) {
    add_all(messages_.received_inputs(i));
    forward_work(i);
    add_all(messages_.sent_output(i));
  }

  // Before the backward of a recomputed segment's last layer: the forward of the layers before
  // it in the segment again. The last layer's output, the checkpoint, was kept or is not needed.
  void recompute_segment(std::size_t end) {
    recomputing_ = true;
    for (std::size_t j = 0; j < end; ++j) {
      if (segment_end_[j] == end) forward_work(j);
    }
    recomputing_ = false;
    memory_events(memory_.at(end, MemoryMoment::after_recompute));
  }

  // What a layer's forward does on this GPU, between receiving its inputs and sending its output.
  void forward_work(std::size_t i) {
    add_all(messages_.redistribution(i, Direction::forward));
    add_all(messages_.gathered_inputs(i));
    gather_layer_weights(i);
    if (layer_of(i).kind != LayerKind::input) {
      if (const auto axes = exchanged_axes(model_, plan_, i); !axes.empty()) {
        forward_window(i, axes);
      } else if (sums_over_group(i)) {
        batch_norm_over_group(i, Direction::forward);
      } else {
        compute(i, Direction::forward, StepPart::whole, 1.0);
      }
    }
    add_all(messages_.reduced_output(i));
  }

  void backward_pass(std::size_t i) {
    const auto& layer = model_.layers()[i];
    add_all(messages_.received_output_gradients(i));
    if (segment_end_[i] == i) recompute_segment(i);
    gather_layer_weights(i);
    const bool input_gradient = computes_input_gradient(model_, i);
    const auto parameters = static_cast<double>(plan_.layers[i].parameters);
    // A tied embedding has no parameters but adds its rows' gradients into its owner's table.
    const bool weight_gradients =
        computes_weight_gradients(layer.layer, plan_.layers[i].parameters);
    if (layer.layer.kind != LayerKind::input) {
      if (const auto axes = exchanged_axes(model_, plan_, i); !axes.empty()) {
        backward_window(i, axes, input_gradient, weight_gradients);
      } else {
        if (sums_over_group(i)) {
          batch_norm_over_group(i, Direction::backward_data);
        } else if (input_gradient ||
                   rules_of(layer.layer.kind).weight_gradients_from_backward_data()) {
          compute(i, Direction::backward_data, StepPart::whole, 1.0);
        }
        if (weight_gradients) compute(i, Direction::backward_filter, StepPart::whole, 1.0);
      }
    }
    if (parameters > 0 && micro_batch_ != first_backward_micro_batch_) sum_gradients(i, parameters);
    if (input_gradient) add_all(messages_.reduced_input_gradient(i));
    if (parameters > 0 && last_backward_pass_ &&
        bucketing_.add(i, parameters * static_cast<double>(dtype_bytes(options_.dtype)))) {
      flush_bucket();
    }
    add_all(messages_.redistribution(i, Direction::backward_data));
    add_all(messages_.sent_input_gradients(i));
  }

  // This micro-batch's parameter gradients of layer i added into the step's (step_part.hpp).
  void sum_gradients(std::size_t i, double parameters) {
    const auto cost = costs_.gradient_sum_time(parameters, options_.dtype);
    add({.kind = StepOpKind::compute,
         .category = OpCategory::compute,
         .label = layer_of(i).name + " " + to_string(Direction::backward_filter) +
                  part_suffix(StepPart::gradient_sum),
         .layer = i,
         .direction = Direction::backward_filter,
         .part = StepPart::gradient_sum,
         .seconds = cost.seconds,
         .provenance = cost.provenance,
         .flops = cost.flops,
         .memory_bytes = cost.bytes});
  }

  void flush_bucket() {
    if (bucketing_.empty()) return;
    const int index = static_cast<int>(program_.buckets.size());
    program_.buckets.push_back(bucketing_.close());
    if (program_.allreduce_group_size <= 1) return;
    add({.kind = sharded(ShardLevel::optimizer) ? StepOpKind::gradient_reduce_scatter
                                                : StepOpKind::gradient_allreduce,
         .category = OpCategory::allreduce,
         .label = "gradient bucket " + std::to_string(index),
         .bytes = program_.buckets.back().bytes,
         .bucket = index});
    if (!options_.overlap_gradient_allreduce) {
      add({.kind = StepOpKind::gradient_wait,
           .category = OpCategory::allreduce,
           .label = "wait for gradient bucket " + std::to_string(index)});
    } else if (program_.stages_gradients && index > 0) {
      // The next bucket's gradients go where bucket index - 1's were (two buffers in turn).
      add({.kind = StepOpKind::gradient_wait,
           .category = OpCategory::allreduce,
           .label = "wait for gradient bucket " + std::to_string(index - 1) + " to free its buffer",
           .bucket = index - 1});
    }
  }

  const ModelGraph& model_;
  const ShardPlan& whole_plan_;
  const ShardPlan plan_;  // one micro-batch's shards: what each pass of the pipeline runs
  const ComputeCostModel& costs_;
  const NetworkMicroBatchPlan& micro_batching_;
  const StepOptions& options_;
  const StageMemoryPlan memory_;
  const LayerMessages messages_;
  const TableCopies copies_;
  StepProgram program_;
  GradientBucketing bucketing_{options_.gradient_bucket_bytes};
  std::int64_t micro_batch_ = 0;    // of the pass being written
  bool last_backward_pass_ = true;  // the pass whose gradients go to the all-reduce
  // The micro-batch whose backward writes the step's parameter gradients; the others add theirs.
  std::int64_t first_backward_micro_batch_ = 0;
  // Per layer, the last layer of its recomputed segment, as the memory plan drops and makes
  // again its feature maps.
  const std::vector<std::optional<std::size_t>>& segment_end_;
  bool recomputing_ = false;  // writing a segment's forward again
  int next_exchange_ = 0;
  StepOp open_wait_;  // what the next halo_wait adds
};

}  // namespace

std::vector<StepProgram> build_step_programs(const ModelGraph& model, const ShardPlan& plan,
                                             const ComputeCostModel& costs,
                                             const StepOptions& options,
                                             const NetworkMicroBatchPlan& micro_batching) {
  std::vector<StepProgram> programs;
  for (int stage = 0; stage < plan.stages; ++stage) {
    programs.push_back(ProgramWriter(model, plan, costs, micro_batching, options, stage).write());
    programs.back().workspace_limit_bytes = options.workspace_bytes;  // the pool it counts
  }
  return programs;
}

std::vector<StepProgram> build_step_programs(const ModelGraph& model, const ShardPlan& plan,
                                             const ComputeCostModel& costs,
                                             const StepOptions& options) {
  return build_step_programs(model, plan, costs, options,
                             plan_network(model, plan, costs, options.dtype));
}

}  // namespace tessera
