#include "rank_tensors.hpp"

#include "sequence_executors.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

#include "tessera/core/model/input_gradients.hpp"
#include "tessera/core/model/training_task.hpp"
#include "tessera/core/strategy/memory_plan.hpp"
#include "tessera/core/strategy/table_copies.hpp"
#include "tessera/core/strategy/tensor_distribution.hpp"
#include "tessera/kernels/layer_kernels.hpp"

namespace tessera::kernels::real {
namespace {

// The rank's planes of a split tensor, or the whole of an unsplit one.
SpatialBox local_box(const TensorShape& shape, bool split, const std::vector<std::int64_t>& grid,
                     std::int64_t shard) {
  const TensorDistribution distribution(
      shape.spatial, split ? grid : std::vector<std::int64_t>(shape.spatial.size(), 1));
  return distribution.owned(split ? shard : 0);
}

float* data_of(const std::unique_ptr<DeviceMemory>& memory) {
  return memory ? memory->data() : nullptr;
}

// The micro-batch whose backward pass comes first in the program: its executors write the
// parameter gradients, later ones add theirs (ParameterBuckets::accumulate).
std::int64_t first_backward_micro_batch(const StepProgram& program) {
  for (const auto& op : program.ops) {
    if (op.kind == StepOpKind::compute && op.direction != Direction::forward) {
      return op.micro_batch;
    }
  }
  return 0;
}

// The micro-batches after the first compute their parameter gradients apart, and the program
// adds them into the step's (StepPart::gradient_sum): once per such micro-batch and layer with
// parameters here, or the gradients would be lost or counted twice.
void check_gradient_sums(const StepProgram& program, const std::vector<std::int64_t>& floats,
                         std::int64_t micro_batches, std::int64_t writes_gradients) {
  std::map<std::pair<std::size_t, std::int64_t>, int> sums;
  for (const auto& op : program.ops) {
    if (op.kind == StepOpKind::compute && op.part == StepPart::gradient_sum) {
      ++sums[{op.layer, op.micro_batch}];
    }
  }
  for (std::int64_t k = 0; k < micro_batches; ++k) {
    for (std::size_t i = 0; i < floats.size(); ++i) {
      const int expected = floats[i] > 0 && k != writes_gradients ? 1 : 0;
      const auto found = sums.find({i, k});
      const int summed = found == sums.end() ? 0 : found->second;
      if (summed != expected) {
        throw std::logic_error("the step program sums layer " + std::to_string(i) +
                               "'s gradients of micro-batch " + std::to_string(k) + " " +
                               std::to_string(summed) + " times; expected " +
                               std::to_string(expected));
      }
    }
  }
}

}  // namespace

std::unique_ptr<DeviceMemory> RankTensors::allocate(std::int64_t floats) {
  return context_.device.allocate(static_cast<std::size_t>(std::max<std::int64_t>(floats, 1)) *
                                  sizeof(float));
}

RankTensors::RankTensors(const ModelGraph& model, const ShardPlan& plan, const StepProgram& program,
                         ExecutionContext& context, Optimizer optimizer, std::uint64_t seed)
    : context_(context) {
  auto& device = context.device;
  device.reset_peak_bytes_in_use();  // the trainer's peak, from here
  const auto& graph = model.layers();
  const std::int64_t micro_batches = std::max<std::int64_t>(1, plan.config.micro_batches);
  micro_batch_samples_ = plan.config.mini_batch / micro_batches;
  context.micro_batches = micro_batches;
  context.tables = table_copies(model, plan);
  runs_here_.resize(graph.size());
  consumers_.resize(graph.size());
  for (std::size_t i = 0; i < graph.size(); ++i) {
    runs_here_[i] = plan.layers.at(i).stage == context.layout.stage;
    for (std::size_t producer : graph[i].input_indices) consumers_[producer].push_back(i);
  }
  micro_.resize(static_cast<std::size_t>(micro_batches));
  for (std::int64_t k = 0; k < micro_batches; ++k) build_layers(model, plan, program, k);

  // The samples stay: the loader fills the whole mini-batch between steps, each micro-batch's
  // input being its slice.
  const std::int64_t input_floats = micro_.front().front().shapes.output_floats;
  samples_floats_ = input_floats * micro_batches;
  if (runs_here(0)) {
    samples_ = allocate(samples_floats_);
    for (std::int64_t k = 0; k < micro_batches; ++k) {
      layer(0, k).output = std::make_unique<DeviceView>(samples_->data() + k * input_floats,
                                                        static_cast<std::size_t>(input_floats));
    }
  }

  // ReLUs run in place, as the memory plan says: their input's producer writes into their buffer.
  const auto successors = in_place_successors(model, plan);
  owner_.resize(graph.size());
  bound_to_.resize(graph.size());
  for (std::size_t i = 0; i < graph.size(); ++i) owner_[i] = successors[i].value_or(i);
  for (std::size_t i = 0; i < graph.size(); ++i) {
    bound_to_[owner_[i]].push_back(i);
    for (auto consumer : consumers_[i]) bound_to_[owner_[i]].push_back(consumer);
  }
  for (std::int64_t k = 0; k < micro_batches; ++k) {
    for (std::size_t i = 0; i < graph.size(); ++i) bind(i, k);
  }

  // The targets of the replica's mini-batch; a micro-batch's losses take the samples kept here:
  // per sample the regressed values, one label, or the labels of the loss's voxels here (its
  // planes where it is split).
  const auto targets = target_layout(model);  // throws for a model without a loss
  for (std::size_t i = 0; i < graph.size(); ++i) {
    const auto kind = graph[i].layer.kind;
    if (kind != LayerKind::mse_loss && kind != LayerKind::softmax_cross_entropy) continue;
    const auto& shapes = layer(i).shapes;
    targets_per_sample_ = targets.task == TrainingTask::segmentation ? shapes.input_voxels.at(0)
                                                                     : targets.values_per_sample;
    target_samples_ = {shapes.first_sample, shapes.batch};
  }
  targets_ = allocate(targets_per_sample_ * plan.config.mini_batch);

  std::vector<std::int64_t> parameter_floats(graph.size(), 0);
  for (std::size_t i = 0; i < graph.size(); ++i) {
    if (runs_here(i)) parameter_floats[i] = layer(i).executor->parameter_floats();
  }
  // The program reduce-scatters the gradients where memory.shard splits the parameters over the
  // ranks summing them, and gathers a layer's weights before its passes where it splits those.
  const bool sharded = std::any_of(program.ops.begin(), program.ops.end(), [](const StepOp& op) {
    return op.kind == StepOpKind::gradient_reduce_scatter;
  });
  const bool weights_sharded = gathers_sharded_weights(program);
  const auto& summing = *context.layout.gradient_group;
  parameters_ = std::make_unique<ParameterBuckets>(
      device, parameter_floats, program.buckets, optimizer, micro_batches > 1,
      ParameterSharding{.ways = sharded ? summing.size() : 1,
                        .index = summing.rank(),
                        .weights = sharded && weights_sharded,
                        .gradients = sharded && program.stages_gradients,
                        .written_early = tables_written_early(
                            context.tables, plan, static_cast<int>(context.layout.stage))});
  parameters_->initialize([&](std::size_t i, std::span<float> values) {
    // A tied table's copy starts as the owner's table (table_copies.hpp).
    layer(i).executor->initialize(mix_seed(seed, context.tables.origin.at(i)), values);
  });
  writes_gradients_ = first_backward_micro_batch(program);
  check_gradient_sums(program, parameter_floats, micro_batches, writes_gradients_);
  for (std::int64_t k = 0; k < micro_batches; ++k) {
    for (std::size_t i = 0; i < graph.size(); ++i) {
      if (!runs_here(i)) continue;
      // A tied layer works on its table holder's parameters (shared_table.hpp).
      const std::size_t owner = parameter_owner(i, context);
      const auto gradients_of = [&](std::size_t holder) {
        return k == writes_gradients_ ? parameters_->gradients(holder)
                                      : parameters_->accumulated_gradients(holder);
      };
      auto& executor = *layer(i, k).executor;
      executor.bind_parameters(parameters_->weights(owner), gradients_of(owner));
      if (owner != i && parameter_floats[i] > 0) {
        executor.bind_untied_parameters(parameters_->weights(i), gradients_of(i));
      }
    }
  }
}

void RankTensors::build_layers(const ModelGraph& model, const ShardPlan& plan,
                               const StepProgram& program, std::int64_t micro_batch) {
  auto& device = context_.device;
  auto& layout = context_.layout;
  const auto& graph = model.layers();
  const std::int64_t batch = micro_batch_samples_;
  const auto& grid = plan.config.spatial_grid;
  // After the redistribution the group's ranks share the micro-batch's samples (data
  // parallelism); a model split to its end (3D U-Net) has no redistribution.
  const bool redistributed = layout.shards > 1 && plan.spatial_end < graph.size();
  KeptSamples dense{0, batch};
  if (redistributed) {
    dense = kept_samples(batch, layout.shards, layout.shard);
    context_.dense_parts = layout.shards;
  }
  auto& layers = micro_[static_cast<std::size_t>(micro_batch)];
  layers.resize(graph.size());
  for (std::size_t i = 0; i < graph.size(); ++i) {
    layers[i].consumer_edges = static_cast<std::int64_t>(consumers_[i].size());
  }
  for (std::size_t i = 0; i < graph.size(); ++i) {
    const auto& layer = graph[i];
    auto& state = layers[i];
    const bool split = plan.layers.at(i).spatially_split;
    state.shapes.batch = split || !redistributed ? batch : dense.count;
    state.shapes.first_sample = split || !redistributed ? 0 : dense.first;
    state.shapes.shares_samples = redistributed && !split;
    state.name = layer.layer.name;
    state.is_input = layer.layer.kind == LayerKind::input;
    state.shapes.tensor = {.split = plan.layers.at(i).tensor.split,
                           .index = layout.tensor,
                           .parts = layout.tensors,
                           .vocabulary = plan.layers.at(i).tensor.whole_vocabulary};
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
      const bool gathered = plan.layers.at(producer).spatially_split && !split;
      const bool tensor_gathered = plan.layers.at(i).tensor.gathered_inputs.at(j);
      state.shapes.input_floats.push_back(gathered || tensor_gathered
                                              ? batch * shape.elements_per_sample()
                                              : layers[producer].shapes.output_floats);
      state.shapes.input_voxels.push_back(gathered ? shape.spatial_elements()
                                                   : layers[producer].shapes.output_voxels);
      if (!runs_here(i)) continue;
      InputLink link;
      link.producer = producer;
      link.wants_gradient = gradient_flows_to(model, producer);
      if (gathered) {
        link.gather = std::make_unique<SpatialRedistribution>(
            device, *layout.spatial_group, TensorDistribution(shape.spatial, grid), batch, shape.c);
        link.whole = allocate(link.gather->whole_floats());
        link.whole_gradient = allocate(link.gather->whole_floats());
        state.shapes.input_floats.back() = link.gather->whole_floats();
      }
      if (tensor_gathered) {
        link.tensor_gathered = true;
        link.whole = allocate(state.shapes.input_floats.back());
        link.whole_gradient = allocate(state.shapes.input_floats.back());
      }
      if (!gathered && !tensor_gathered && layers[producer].consumer_edges > 1) {
        link.scratch = allocate(state.shapes.input_floats.back());
      }
      state.inputs.push_back(std::move(link));
    }
    if (runs_here(i)) {
      state.executor = make_layer_executor(model, i, split, state.shapes, program, context_);
    }
  }
}

float* RankTensors::output_of(std::size_t i, std::int64_t micro_batch) {
  return data_of(layer(owner_[i], micro_batch).output);
}

float* RankTensors::gradient_of(std::size_t i, std::int64_t micro_batch) {
  return data_of(layer(owner_[i], micro_batch).gradient);
}

std::size_t RankTensors::output_floats(std::size_t i, std::int64_t micro_batch) {
  const auto& output = layer(owner_[i], micro_batch).output;
  return output ? output->floats() : 0;
}

void RankTensors::bind(std::size_t i, std::int64_t micro_batch) {
  auto& state = layer(i, micro_batch);
  if (!state.executor) return;
  LayerTensors tensors{.y = output_of(i, micro_batch), .dy = gradient_of(i, micro_batch)};
  for (auto& link : state.inputs) {
    const bool wanted = link.wants_gradient;
    if (link.whole) {
      tensors.x.push_back(link.whole->data());
      tensors.dx.push_back(wanted ? link.whole_gradient->data() : nullptr);
    } else {
      tensors.x.push_back(output_of(link.producer, micro_batch));
      tensors.dx.push_back(!wanted        ? nullptr
                           : link.scratch ? link.scratch->data()
                                          : gradient_of(link.producer, micro_batch));
    }
  }
  state.executor->bind_tensors(std::move(tensors));
}

void RankTensors::bind_around(std::size_t tensor, std::int64_t micro_batch) {
  for (auto i : bound_to_[tensor]) bind(i, micro_batch);
}

double RankTensors::apply_memory_op(const StepOp& op) {
  const bool output = op.memory == MemoryUse::activations;
  const bool gradient = op.memory == MemoryUse::activation_gradients;
  if (op.layer >= layer_count() || (!output && !gradient)) return 0;
  auto& state = layer(op.layer, op.micro_batch);
  auto& memory = output ? state.output : state.gradient;
  auto& device = context_.device;
  // The samples this stage holds stay allocated (the loader writes them between steps).
  const bool samples = output && state.is_input && runs_here(op.layer);
  const double before = device.bytes_in_use();
  switch (op.kind) {
    case StepOpKind::allocate:
      if (samples) return 0;
      if (memory) throw std::logic_error("the step program allocates " + state.name + " twice");
      memory = allocate(state.shapes.output_floats);
      // Several consumers add their input gradients into it.
      if (gradient && state.consumer_edges > 1) device.fill(memory->data(), memory->floats(), 0);
      bind_around(op.layer, op.micro_batch);
      break;
    case StepOpKind::release:
      if (samples) return 0;
      memory.reset();
      bind_around(op.layer, op.micro_batch);
      break;
    case StepOpKind::offload_start:
      if (!state.host_copy) state.host_copy = device.allocate_pinned_host(state.output->bytes());
      device.copy_to_host_async(state.output->data(), state.host_copy->data(),
                                state.output->floats());
      break;
    case StepOpKind::prefetch_start:
      device.copy_to_device_async(state.host_copy->data(), state.output->data(),
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

void RankTensors::sum_over_tensor_group(const StepOp& op, Communicator& group) {
  auto& state = layer(op.layer, op.micro_batch);
  context_.device.synchronize();  // the partial sums are written
  if (op.direction == Direction::forward) {
    group.allreduce_sum(output_of(op.layer, op.micro_batch),
                        static_cast<std::size_t>(state.shapes.output_floats));
    return;
  }
  const auto& link = state.inputs.at(0);
  if (!link.wants_gradient) return;
  float* gradient =
      link.scratch ? link.scratch->data() : gradient_of(link.producer, op.micro_batch);
  group.allreduce_sum(gradient, static_cast<std::size_t>(state.shapes.input_floats.at(0)));
}

void RankTensors::gather_over_tensor_group(const StepOp& op, Communicator& group) {
  auto& state = layer(op.layer, op.micro_batch);
  auto& link = state.inputs.at(static_cast<std::size_t>(op.input));
  const auto& producer = layer(link.producer, op.micro_batch);
  auto& device = context_.device;
  // Each rank's channels of each sample, gathered rank by rank, then laid out sample by sample.
  const auto parts = static_cast<std::size_t>(group.size());
  const auto share = static_cast<std::size_t>(producer.shapes.output_floats);
  const auto per_sample = share / static_cast<std::size_t>(producer.shapes.batch);
  auto staging = allocate(static_cast<std::int64_t>(share * parts));
  device.copy_on_device(output_of(link.producer, op.micro_batch),
                        staging->data() + static_cast<std::size_t>(group.rank()) * share, share);
  device.synchronize();
  group.allgather(staging->data(), share);
  for (std::size_t n = 0; n < static_cast<std::size_t>(producer.shapes.batch); ++n) {
    for (std::size_t r = 0; r < parts; ++r) {
      device.copy_on_device(staging->data() + r * share + n * per_sample,
                            link.whole->data() + (n * parts + r) * per_sample, per_sample);
    }
  }
  device.synchronize();
}

void RankTensors::finish_backward(std::size_t i, std::int64_t micro_batch) {
  for (auto& link : layer(i, micro_batch).inputs) {
    if (link.tensor_gathered && link.wants_gradient) {
      // This rank's channels of the whole input's gradient, sample by sample, into (or, with
      // other consumers, added to) its producer's.
      const auto& producer = layer(link.producer, micro_batch);
      const auto parts = static_cast<std::size_t>(context_.layout.tensors);
      const auto batch = static_cast<std::size_t>(producer.shapes.batch);
      const auto per_sample = static_cast<std::size_t>(producer.shapes.output_floats) / batch;
      const auto rank = static_cast<std::size_t>(context_.layout.tensor);
      float* gradient = gradient_of(link.producer, micro_batch);
      for (std::size_t n = 0; n < batch; ++n) {
        const float* mine = link.whole_gradient->data() + (n * parts + rank) * per_sample;
        if (producer.consumer_edges > 1) {
          context_.device.layers().axpy(static_cast<std::int64_t>(per_sample), 1.0F, mine,
                                        gradient + n * per_sample);
        } else {
          context_.device.copy_on_device(mine, gradient + n * per_sample, per_sample);
        }
      }
      continue;
    }
    if (!link.scratch || !link.wants_gradient) continue;
    const auto& producer = layer(link.producer, micro_batch);
    context_.device.layers().axpy(producer.shapes.output_floats, 1.0F, link.scratch->data(),
                                  gradient_of(link.producer, micro_batch));
  }
}

}  // namespace tessera::kernels::real
