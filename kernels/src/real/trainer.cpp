#include "tessera/kernels/real/trainer.hpp"

#include <chrono>
#include <stdexcept>

#include "execution_context.hpp"
#include "layer_executor.hpp"
#include "parameter_buckets.hpp"
#include "spatial_redistribution.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/layer_kernels.hpp"

namespace tessera::kernels::real {
namespace {

using Clock = std::chrono::steady_clock;

float default_learning_rate(Optimizer optimizer) {
  return optimizer == Optimizer::adam ? 1e-3F : 1e-2F;
}

// How layer `consumer` reads its input `j`: straight from the producer's tensor, or through the
// redistribution when the producer is split and the consumer is not.
struct InputLink {
  std::size_t producer = 0;
  std::unique_ptr<SpatialRedistribution> gather;
  std::unique_ptr<DeviceMemory> whole;           // the kept samples' whole activation
  std::unique_ptr<DeviceMemory> whole_gradient;  // its gradient
  std::unique_ptr<DeviceMemory> scratch;  // input gradient when the producer has other consumers
};

struct LayerState {
  std::unique_ptr<LayerExecutor> executor;
  std::unique_ptr<DeviceMemory> output;
  std::unique_ptr<DeviceMemory> gradient;  // of the output
  std::vector<InputLink> inputs;
  LocalShapes shapes;
  std::string name;
  std::int64_t consumer_edges = 0;
  bool is_input = false;
};

}  // namespace

struct Trainer::State {
  State(Device& device, RankLayout& layout, const ShardPlan& plan)
      : context(device, layout, plan.config.spatial_grid) {}

  ExecutionContext context;
  TrainerOptions options;
  std::vector<LayerState> layers;
  std::unique_ptr<ParameterBuckets> parameters;
  std::unique_ptr<DeviceMemory> targets;
  SpatialBox input_box;
  KeptSamples dense_samples;  // of the replica's mini-batch, the ones the dense part runs here
  double allocated = 0;

  std::unique_ptr<DeviceMemory> allocate(std::int64_t floats) {
    auto memory = context.device.allocate(
        static_cast<std::size_t>(std::max<std::int64_t>(floats, 1)) * sizeof(float));
    allocated += static_cast<double>(memory->bytes());
    return memory;
  }

  // Runs `work`, adding its time minus the communication timed inside it to `compute` and to
  // `layer_pass` (this layer's pass in the report).
  template <typename Work>
  void timed_compute(double& compute, double& layer_pass, Work&& work) {
    const double communication_before = context.times.communication();
    const auto begin = Clock::now();
    work();
    context.device.synchronize();
    const double seconds =
        seconds_since(begin) - (context.times.communication() - communication_before);
    compute += seconds;
    layer_pass += seconds;
  }
};

namespace {

// The rank's planes of a split tensor, or the whole of an unsplit one.
SpatialBox local_box(const TensorShape& shape, bool split, const std::vector<std::int64_t>& grid,
                     std::int64_t shard) {
  const TensorDistribution distribution(
      shape.spatial, split ? grid : std::vector<std::int64_t>(shape.spatial.size(), 1));
  return distribution.owned(split ? shard : 0);
}

}  // namespace

Trainer::Trainer(const ModelGraph& model, const ShardPlan& plan, Device& device, RankLayout& layout,
                 const TrainerOptions& options)
    : state_(std::make_unique<State>(device, layout, plan)) {
  build(model, plan, options);
}

void Trainer::build(const ModelGraph& model, const ShardPlan& plan, const TrainerOptions& options) {
  auto& s = *state_;
  auto& device = s.context.device;
  auto& layout = s.context.layout;
  s.options = options;
  if (s.options.learning_rate <= 0)
    s.options.learning_rate = default_learning_rate(options.optimizer);
  s.context.seed = options.seed;
  s.context.micro_batching = options.micro_batching;
  const auto& graph = model.layers();
  if (graph.empty() || graph.back().layer.kind != LayerKind::mse_loss) {
    throw std::invalid_argument("model " + model.name() +
                                ": the real backend trains models ending in an MSE loss (the "
                                "synthetic CosmoFlow targets); others are not yet supported");
  }
  const std::int64_t batch = plan.config.mini_batch;
  const auto& grid = plan.config.spatial_grid;
  // After the redistribution the group's ranks share the mini-batch's samples (data parallelism).
  const bool redistributed = layout.shards > 1;
  KeptSamples dense{0, batch};
  if (redistributed) {
    dense = kept_samples(batch, layout.shards, layout.shard);
    s.context.dense_parts = layout.shards;
  }
  s.layers.resize(graph.size());
  for (std::size_t i = 0; i < graph.size(); ++i) {
    for (std::size_t producer : graph[i].input_indices) ++s.layers[producer].consumer_edges;
  }
  std::vector<std::int64_t> parameter_floats(graph.size(), 0);
  for (std::size_t i = 0; i < graph.size(); ++i) {
    const auto& layer = graph[i];
    auto& state = s.layers[i];
    const bool split = plan.layers.at(i).spatially_split;
    state.shapes.batch = split || !redistributed ? batch : dense.count;
    state.shapes.first_sample = split || !redistributed ? 0 : dense.first;
    state.shapes.shares_samples = redistributed && !split;
    state.name = layer.layer.name;
    state.is_input = layer.layer.kind == LayerKind::input;
    if (!layer.output_shape.spatial.empty() || split) {
      const auto box = local_box(layer.output_shape, split, grid, layout.shard);
      state.shapes.output_voxels = box.volume();
      if (i == 0) s.input_box = box;
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
        s.allocated += link.gather->allocated_bytes();
        link.whole = s.allocate(link.gather->whole_floats());
        link.whole_gradient = s.allocate(link.gather->whole_floats());
        state.shapes.input_floats.push_back(link.gather->whole_floats());
        state.shapes.input_voxels.push_back(shape.spatial_elements());
      } else {
        state.shapes.input_floats.push_back(s.layers[producer].shapes.output_floats);
        state.shapes.input_voxels.push_back(s.layers[producer].shapes.output_voxels);
      }
      if (!gathered && s.layers[producer].consumer_edges > 1) {
        link.scratch = s.allocate(state.shapes.input_floats.back());
      }
      state.inputs.push_back(std::move(link));
    }
    state.executor = make_layer_executor(layer, i, split, state.shapes, s.context);
    state.output = s.allocate(state.shapes.output_floats);
    state.gradient = s.allocate(state.shapes.output_floats);
    parameter_floats[i] = state.executor->parameter_floats();
  }
  s.targets = s.allocate(s.layers.back().shapes.input_floats.at(0));
  s.dense_samples = dense;
  s.parameters = std::make_unique<ParameterBuckets>(device, parameter_floats, options.optimizer,
                                                    options.gradient_bucket_bytes);
  s.allocated += s.parameters->allocated_bytes();
  s.parameters->initialize([&](std::size_t layer, std::span<float> values) {
    s.layers[layer].executor->initialize(mix_seed(options.seed, layer), values);
  });
  for (std::size_t i = 0; i < graph.size(); ++i) {
    s.layers[i].executor->bind_parameters(s.parameters->weights(i), s.parameters->gradients(i));
  }
}

Trainer::~Trainer() = default;

std::vector<std::int64_t> Trainer::input_first() const {
  return state_->input_box.first;
}
std::vector<std::int64_t> Trainer::input_count() const {
  return state_->input_box.count;
}
double Trainer::allocated_bytes() const {
  return state_->allocated;
}
std::vector<float> Trainer::parameters() const {
  return state_->parameters->host_weights();
}

StepReport Trainer::step(const StepInput& input, double io_seconds) {
  auto& s = *state_;
  auto& device = s.context.device;
  auto& layout = s.context.layout;
  s.context.times = {};
  StepReport report;
  auto& b = report.breakdown;
  const std::size_t count = s.layers.size();
  report.layer_compute.resize(2 * count + 1);
  for (std::size_t i = 0; i < count; ++i) {
    report.layer_compute[i] = {s.layers[i].name, "forward", 0};
    report.layer_compute[count + i] = {s.layers[i].name, "backward", 0};
  }
  report.layer_compute[2 * count] = {"optimizer", "update", 0};
  const auto step_begin = Clock::now();

  // Input and targets to the device (I/O: the copy belongs to getting the sample in).
  {
    const auto begin = Clock::now();
    auto& first = s.layers.front();
    // The targets of the replica's mini-batch; the loss takes those of the samples kept here.
    const std::size_t per_sample =
        s.targets->floats() / static_cast<std::size_t>(s.dense_samples.count);
    const std::size_t replica_targets = per_sample * static_cast<std::size_t>(first.shapes.batch);
    if (input.volume.size() != static_cast<std::size_t>(first.shapes.output_floats) ||
        input.targets.size() != replica_targets) {
      throw std::invalid_argument(
          "step input has " + std::to_string(input.volume.size()) + " volume and " +
          std::to_string(input.targets.size()) + " target floats; the rank's shard needs " +
          std::to_string(first.shapes.output_floats) + " and " + std::to_string(replica_targets));
    }
    device.copy_to_device(input.volume.data(), first.output->data(), input.volume.size());
    device.copy_to_device(
        input.targets.data() + static_cast<std::size_t>(s.dense_samples.first) * per_sample,
        s.targets->data(), s.targets->floats());
    device.synchronize();
    s.context.targets = s.targets->data();
    b.io_seconds = io_seconds + seconds_since(begin);
  }
  s.context.first_sample = s.context.step * layout.replicas * s.layers.front().shapes.batch +
                           layout.replica * s.layers.front().shapes.batch;

  // Forward, in the model's topological order.
  for (std::size_t i = 0; i < count; ++i) {
    auto& state = s.layers[i];
    std::vector<const float*> x;
    for (auto& link : state.inputs) {
      if (link.gather) {
        const double before = s.context.times.other_communication;
        const auto begin = Clock::now();
        link.gather->forward(s.layers[link.producer].output->data(), link.whole->data());
        device.synchronize();
        s.context.times.other_communication = before + seconds_since(begin);
        x.push_back(link.whole->data());
      } else {
        x.push_back(s.layers[link.producer].output->data());
      }
    }
    s.timed_compute(b.compute_seconds, report.layer_compute[i].seconds,
                    [&] { state.executor->forward(x, state.output->data()); });
  }

  // Backward in reverse, each finished layer's gradients joining their bucket's all-reduce.
  for (auto& state : s.layers) {
    if (state.consumer_edges > 1) {
      device.fill(state.gradient->data(), static_cast<std::size_t>(state.shapes.output_floats), 0);
    }
  }
  // Every rank's gradients are partial (its planes, its samples): one sum over all ranks.
  s.parameters->begin_backward(layout.gradient_group->size() > 1 ? layout.gradient_group.get()
                                                                 : nullptr);
  for (std::size_t i = s.layers.size(); i-- > 0;) {
    auto& state = s.layers[i];
    std::vector<const float*> x;
    std::vector<float*> dx;
    for (auto& link : state.inputs) {
      auto& producer = s.layers[link.producer];
      const bool wanted = !producer.is_input;  // no gradient for the input samples
      if (link.gather) {
        x.push_back(link.whole->data());
        dx.push_back(wanted ? link.whole_gradient->data() : nullptr);
      } else {
        x.push_back(producer.output->data());
        dx.push_back(!wanted        ? nullptr
                     : link.scratch ? link.scratch->data()
                                    : producer.gradient->data());
      }
    }
    s.timed_compute(b.compute_seconds, report.layer_compute[count + i].seconds, [&] {
      state.executor->backward(x, state.output->data(), state.gradient->data(), dx);
      for (std::size_t j = 0; j < state.inputs.size(); ++j) {
        auto& link = state.inputs[j];
        if (dx[j] == nullptr) continue;
        auto& producer = s.layers[link.producer];
        if (link.scratch && !link.gather) {
          device.layers().axpy(s.layers[link.producer].shapes.output_floats, 1.0F, dx[j],
                               producer.gradient->data());
        }
      }
    });
    // The gradients of the redistributed activation go back to the shards' owners.
    for (std::size_t j = 0; j < state.inputs.size(); ++j) {
      auto& link = state.inputs[j];
      if (!link.gather || dx[j] == nullptr) continue;
      auto& producer = s.layers[link.producer];
      const auto begin = Clock::now();
      link.gather->backward(dx[j], producer.gradient->data(), producer.consumer_edges > 1);
      device.synchronize();
      s.context.times.other_communication += seconds_since(begin);
    }
    const auto begin = Clock::now();
    s.parameters->layer_done(i);
    s.context.times.allreduce += seconds_since(begin);
  }
  {
    const auto begin = Clock::now();
    s.parameters->finish_backward();
    s.context.times.allreduce += seconds_since(begin);
  }
  s.timed_compute(b.compute_seconds, report.layer_compute[2 * count].seconds, [&] {
    s.parameters->optimizer_step(s.options.learning_rate, s.context.step + 1);
  });

  // The reported loss is the global batch's: the mean over the ranks sharing the dense part (each
  // sample counted once, see dense_parts), then over the replicas.
  double loss = s.layers.back().executor->loss();
  if (s.context.dense_parts > 1) {
    const auto begin = Clock::now();
    layout.spatial_group->allreduce_sum(&loss, 1);
    loss /= static_cast<double>(s.context.dense_parts);
    s.context.times.other_communication += seconds_since(begin);
  }
  if (layout.replicas > 1) {
    const auto begin = Clock::now();
    layout.data_group->allreduce_sum(&loss, 1);
    loss /= static_cast<double>(layout.replicas);
    s.context.times.other_communication += seconds_since(begin);
  }
  ++s.context.step;
  report.loss = loss;
  b.halo_seconds = s.context.times.halo;
  b.allreduce_seconds = s.context.times.allreduce;
  b.other_communication_seconds = s.context.times.other_communication;
  report.step_seconds = seconds_since(step_begin) + io_seconds;
  b.idle_seconds = std::max(0.0, report.step_seconds - b.total());
  return report;
}

}  // namespace tessera::kernels::real
