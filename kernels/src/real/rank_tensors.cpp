#include "rank_tensors.hpp"

#include <stdexcept>

#include "tessera/core/training_task.hpp"
#include "tessera/kernels/layer_kernels.hpp"
#include "tessera/kernels/tensor_distribution.hpp"

namespace tessera::kernels::real {
namespace {

// The rank's planes of a split tensor, or the whole of an unsplit one.
SpatialBox local_box(const TensorShape& shape, bool split, const std::vector<std::int64_t>& grid,
                     std::int64_t shard) {
  const TensorDistribution distribution(
      shape.spatial, split ? grid : std::vector<std::int64_t>(shape.spatial.size(), 1));
  return distribution.owned(split ? shard : 0);
}

}  // namespace

std::unique_ptr<DeviceMemory> RankTensors::allocate(std::int64_t floats) {
  auto memory = context_.device.allocate(
      static_cast<std::size_t>(std::max<std::int64_t>(floats, 1)) * sizeof(float));
  allocated_ += static_cast<double>(memory->bytes());
  return memory;
}

RankTensors::RankTensors(const ModelGraph& model, const ShardPlan& plan, const StepProgram& program,
                         ExecutionContext& context, Optimizer optimizer, std::uint64_t seed)
    : context_(context) {
  auto& device = context.device;
  device.reset_peak_bytes_in_use();  // the trainer's peak, from here
  auto& layout = context.layout;
  const auto& graph = model.layers();
  const auto targets = target_layout(model);  // throws for a model without a loss
  const std::int64_t batch = plan.config.mini_batch;
  const auto& grid = plan.config.spatial_grid;
  // After the redistribution the group's ranks share the mini-batch's samples (data parallelism);
  // a model split to its end (3D U-Net) has no redistribution.
  const bool redistributed = layout.shards > 1 && plan.spatial_end < graph.size();
  KeptSamples dense{0, batch};
  if (redistributed) {
    dense = kept_samples(batch, layout.shards, layout.shard);
    context.dense_parts = layout.shards;
  }
  dense_samples_ = dense;
  layers_.resize(graph.size());
  consumers_.resize(graph.size());
  for (std::size_t i = 0; i < graph.size(); ++i) {
    for (std::size_t producer : graph[i].input_indices) {
      ++layers_[producer].consumer_edges;
      consumers_[producer].push_back(i);
    }
  }
  std::vector<std::int64_t> parameter_floats(graph.size(), 0);
  for (std::size_t i = 0; i < graph.size(); ++i) {
    const auto& layer = graph[i];
    auto& state = layers_[i];
    const bool split = plan.layers.at(i).spatially_split;
    state.shapes.batch = split || !redistributed ? batch : dense.count;
    state.shapes.first_sample = split || !redistributed ? 0 : dense.first;
    state.shapes.shares_samples = redistributed && !split;
    state.name = layer.layer.name;
    state.is_input = layer.layer.kind == LayerKind::input;
    if (!layer.output_shape.spatial.empty() || split) {
      const auto box = local_box(layer.output_shape, split, grid, layout.shard);
      state.shapes.output_voxels = box.volume();
      if (i == 0) input_box_ = box;
    }
    state.shapes.output_floats =
        state.shapes.batch * layer.output_shape.c * state.shapes.output_voxels;
    for (std::size_t j = 0; j < layer.input_indices.size(); ++j) {
      const std::size_t producer = layer.input_indices[j];
      const auto& shape = layer.input_shapes[j];
      InputLink link;
      link.producer = producer;
      const bool gathered = plan.layers.at(producer).spatially_split && !split;
      if (gathered) {
        link.gather = std::make_unique<SpatialRedistribution>(
            device, *layout.spatial_group, TensorDistribution(shape.spatial, grid), batch, shape.c);
        allocated_ += link.gather->allocated_bytes();
        link.whole = allocate(link.gather->whole_floats());
        link.whole_gradient = allocate(link.gather->whole_floats());
        state.shapes.input_floats.push_back(link.gather->whole_floats());
        state.shapes.input_voxels.push_back(shape.spatial_elements());
      } else {
        state.shapes.input_floats.push_back(layers_[producer].shapes.output_floats);
        state.shapes.input_voxels.push_back(layers_[producer].shapes.output_voxels);
      }
      if (!gathered && layers_[producer].consumer_edges > 1) {
        link.scratch = allocate(state.shapes.input_floats.back());
      }
      state.inputs.push_back(std::move(link));
    }
    state.executor = make_layer_executor(layer, i, split, state.shapes, program, context);
    // The samples stay: the loader fills them between steps. Every other output comes and goes
    // with the program's memory ops.
    if (state.is_input) state.output = allocate(state.shapes.output_floats);
    parameter_floats[i] = state.executor->parameter_floats();
  }
  for (std::size_t i = 0; i < graph.size(); ++i) bind(i);
  // The targets of the samples this rank's losses see: per sample the regressed values, one
  // label, or the labels of the loss's voxels here (its planes where it is split).
  for (std::size_t i = 0; i < graph.size(); ++i) {
    const auto kind = graph[i].layer.kind;
    if (kind != LayerKind::mse_loss && kind != LayerKind::softmax_cross_entropy) continue;
    const auto& shapes = layers_[i].shapes;
    targets_per_sample_ = targets.task == TrainingTask::segmentation ? shapes.input_voxels.at(0)
                                                                     : targets.values_per_sample;
    target_samples_ = {shapes.first_sample, shapes.batch};
  }
  targets_ = allocate(targets_per_sample_ * target_samples_.count);
  parameters_ =
      std::make_unique<ParameterBuckets>(device, parameter_floats, program.buckets, optimizer);
  allocated_ += parameters_->allocated_bytes();
  parameters_->initialize([&](std::size_t layer, std::span<float> values) {
    layers_[layer].executor->initialize(mix_seed(seed, layer), values);
  });
  for (std::size_t i = 0; i < graph.size(); ++i) {
    layers_[i].executor->bind_parameters(parameters_->weights(i), parameters_->gradients(i));
  }
}

namespace {

float* data_of(const std::unique_ptr<DeviceMemory>& memory) {
  return memory ? memory->data() : nullptr;
}

}  // namespace

void RankTensors::bind(std::size_t i) {
  auto& state = layers_[i];
  LayerTensors tensors{.y = data_of(state.output), .dy = data_of(state.gradient)};
  for (auto& link : state.inputs) {
    auto& producer = layers_[link.producer];
    const bool wanted = !producer.is_input;  // no gradient for the input samples
    if (link.gather) {
      tensors.x.push_back(link.whole->data());
      tensors.dx.push_back(wanted ? link.whole_gradient->data() : nullptr);
    } else {
      tensors.x.push_back(data_of(producer.output));
      tensors.dx.push_back(!wanted        ? nullptr
                           : link.scratch ? link.scratch->data()
                                          : data_of(producer.gradient));
    }
  }
  state.executor->bind_tensors(std::move(tensors));
}

void RankTensors::bind_around(std::size_t tensor) {
  bind(tensor);
  for (auto consumer : consumers_[tensor]) bind(consumer);
}

double RankTensors::apply_memory_op(const StepOp& op) {
  const bool output = op.memory == MemoryUse::activations;
  const bool gradient = op.memory == MemoryUse::activation_gradients;
  if (op.layer >= layers_.size() || (!output && !gradient)) return 0;
  auto& state = layers_[op.layer];
  auto& memory = output ? state.output : state.gradient;
  auto& device = context_.device;
  const double before = device.bytes_in_use();
  switch (op.kind) {
    case StepOpKind::allocate:
      // The samples stay allocated (the loader writes them between steps).
      if (output && state.is_input) return 0;
      if (memory) throw std::logic_error("the step program allocates " + state.name + " twice");
      memory = device.allocate(
          static_cast<std::size_t>(std::max<std::int64_t>(state.shapes.output_floats, 1)) *
          sizeof(float));
      // Several consumers add their input gradients into it.
      if (gradient && state.consumer_edges > 1) {
        context_.device.fill(memory->data(), memory->floats(), 0);
      }
      bind_around(op.layer);
      break;
    case StepOpKind::release:
      if (output && state.is_input) return 0;
      memory.reset();
      bind_around(op.layer);
      break;
    case StepOpKind::offload_start:
      if (!state.host_copy) {
        state.host_copy = context_.device.allocate_pinned_host(state.output->bytes());
      }
      context_.device.copy_to_host_async(state.output->data(), state.host_copy->data(),
                                         state.output->floats());
      break;
    case StepOpKind::prefetch_start:
      context_.device.copy_to_device_async(state.host_copy->data(), state.output->data(),
                                           state.output->floats());
      break;
    default:
      break;
  }
  return device.bytes_in_use() - before;
}

void RankTensors::rehearse(const StepProgram& program) {
  for (const auto& op : program.ops) {
    if (op.kind == StepOpKind::allocate || op.kind == StepOpKind::release) apply_memory_op(op);
  }
}

void RankTensors::accumulate_input_gradients(std::size_t i) {
  for (auto& link : layers_[i].inputs) {
    auto& producer = layers_[link.producer];
    if (!link.scratch || producer.is_input) continue;
    context_.device.layers().axpy(producer.shapes.output_floats, 1.0F, link.scratch->data(),
                                  producer.gradient->data());
  }
}

}  // namespace tessera::kernels::real
