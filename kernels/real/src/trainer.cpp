#include "tessera/kernels/real/trainer.hpp"

#include "execution_context.hpp"
#include "program_player.hpp"
#include "rank_tensors.hpp"
#include "tessera/core/strategy/tensor_split.hpp"
#include "tessera/kernels/device.hpp"

namespace tessera::kernels::real {
namespace {

float default_learning_rate(Optimizer optimizer) {
  return optimizer == Optimizer::adam ? 1e-3F : 1e-2F;
}

// What this rank runs of each layer: the layer itself, or its part of a split over the tensor
// group (tensor_split.hpp).
ModelGraph model_on_rank(const ModelGraph& model, const ShardPlan& plan) {
  if (plan.config.tensor <= 1) return model;
  std::vector<LayerTensorSplit> splits;
  splits.reserve(plan.layers.size());
  for (const auto& layer : plan.layers) splits.push_back(layer.tensor);
  return tensor_local_model(model, splits);
}

}  // namespace

struct Trainer::State {
  State(const ModelGraph& model, const ShardPlan& plan, StepProgram step_program, Device& device,
        RankLayout& layout, const TrainerOptions& options)
      : program(std::move(step_program)),
        context(device, layout, plan.config.spatial_grid),
        local_model(model_on_rank(model, plan)),
        tensors(local_model, plan, program, context, options.optimizer, options.seed),
        player(program, tensors, context,
               options.learning_rate > 0 ? options.learning_rate
                                         : default_learning_rate(options.optimizer)) {
    context.seed = options.seed;  // dropout masks
    device.convolutions().keep_deterministic_only(options.deterministic);
    if (program.workspace_limit_bytes) {
      context.convolution_workspace->limit_to(*program.workspace_limit_bytes);
    }
    tensors.rehearse(program);
  }

  StepProgram program;
  ExecutionContext context;
  ModelGraph local_model;
  RankTensors tensors;
  ProgramPlayer player;
};

Trainer::Trainer(const ModelGraph& model, const ShardPlan& plan, StepProgram program,
                 Device& device, RankLayout& layout, const TrainerOptions& options)
    : state_(std::make_unique<State>(model, plan, std::move(program), device, layout, options)) {}

Trainer::~Trainer() = default;

std::vector<std::int64_t> Trainer::input_first() const {
  return state_->tensors.input_box().first;
}
std::vector<std::int64_t> Trainer::input_count() const {
  return state_->tensors.input_box().count;
}
double Trainer::peak_bytes() const {
  return state_->context.device.peak_bytes_in_use();
}
// Sharded weights are gathered whole before they are read (every rank reads them alike).
std::vector<float> Trainer::parameters() const {
  return state_->tensors.parameters().host_weights(state_->context.layout.gradient_group.get());
}
std::vector<float> Trainer::parameters_of(std::size_t layer) const {
  return state_->tensors.parameters().host_weights(layer,
                                                   state_->context.layout.gradient_group.get());
}
std::vector<float> Trainer::gradients_of(std::size_t layer) const {
  return state_->tensors.parameters().host_gradients(layer);
}
void Trainer::keep_outputs_of(const std::vector<std::size_t>& layers) {
  state_->player.keep_outputs_of(layers);
}
std::vector<float> Trainer::kept_output_of(std::size_t layer) const {
  return state_->player.kept_output_of(layer);
}
std::vector<float> Trainer::part_of(std::size_t layer, const std::vector<float>& whole) const {
  auto& executor = *state_->tensors.layer(layer).executor;
  std::vector<float> part(static_cast<std::size_t>(executor.parameter_floats()));
  executor.take_part(whole, part);
  return part;
}
const StepProgram& Trainer::program() const {
  return state_->program;
}
ConvolutionPlanCounts Trainer::convolution_plan_counts() const {
  ConvolutionPlanCounts counts;
  auto& tensors = state_->tensors;
  for (std::int64_t k = 0; k < tensors.micro_batches(); ++k) {
    for (std::size_t i = 0; i < tensors.layer_count(); ++i) {
      if (const auto& executor = tensors.layer(i, k).executor) {
        counts += executor->convolution_plan_counts();
      }
    }
  }
  return counts;
}

StepReport Trainer::step(StepInputSource& source) {
  auto& s = *state_;
  auto& layout = s.context.layout;
  auto report = s.player.play(source);
  // The reported loss is the global batch's: every loss layer's share in every micro-batch on
  // every rank (each scaled so that their sum over the run is the global mean, see loss_scale),
  // summed over the stage's ranks, then over the stages (the last holds the losses).
  // Bookkeeping of the measurement, not part of the step the program describes: outside its time.
  double loss = 0;
  for (std::int64_t k = 0; k < s.tensors.micro_batches(); ++k) {
    for (std::size_t i = 0; i < s.tensors.layer_count(); ++i) {
      if (s.tensors.runs_here(i)) loss += s.tensors.layer(i, k).executor->loss();
    }
  }
  if (layout.gradient_group->size() > 1) layout.gradient_group->allreduce_sum(&loss, 1);
  if (layout.stage_group->size() > 1) layout.stage_group->allreduce_sum(&loss, 1);
  report.loss = loss;
  ++s.context.step;
  return report;
}

}  // namespace tessera::kernels::real
