#include "tessera/kernels/real/model_step_check.hpp"

#include <stdexcept>

#include "tessera/core/model/training_task.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"
#include "tessera/core/strategy/step_program.hpp"
#include "tessera/kernels/real/rank_layout.hpp"
#include "tessera/kernels/real/step_input_source.hpp"
#include "tessera/kernels/real/synthetic_input.hpp"
#include "tessera/kernels/real/trainer.hpp"

namespace tessera::kernels::real {
namespace {

// The same batch every step, kept to be written out.
class FixedInput final : public StepInputSource {
 public:
  explicit FixedInput(StepInput input) : input_(std::move(input)) {}
  StepInput next(double& io_seconds) override {
    io_seconds = 0;
    return input_;
  }
  InputSource last_source() const override { return InputSource::none; }
  std::string description() const override { return "one batch of the synthetic task"; }

 private:
  StepInput input_;
};

void refuse_random_layers(const ModelGraph& model) {
  for (const auto& resolved : model.layers()) {
    const auto* dropout = std::get_if<DropoutParams>(&resolved.layer.params);
    if (dropout != nullptr && dropout->drop_probability > 0) {
      throw std::invalid_argument(
          "layer " + resolved.layer.name +
          ": a dropout layer that drops values draws masks another framework cannot take along "
          "(give the model without dropout: drop_probability 0 in a model file, or dropout: false "
          "where a zoo model has that option)");
    }
  }
}

}  // namespace

ModelStepCheck check_model_step(const ModelGraph& model, std::int64_t mini_batch, Device& device,
                                Communicator& rank, std::uint64_t seed) {
  refuse_random_layers(model);
  const auto& sample = model.layers().front().output_shape;
  ParallelConfig config;
  config.mini_batch = mini_batch;
  config.spatial_grid.assign(sample.spatial.size(), 1);
  auto layout = make_rank_layout(rank, config);
  const auto plan = plan_shards(model, config, "", {});
  // The schedule is one rank's: what the ops cost does not matter here.
  DeviceRoofline roofline;
  roofline.device = device.info().name;
  roofline.fp32_flops_per_second = 1e12;
  roofline.memory_bandwidth_bytes_per_second = 1e11;
  constexpr double workspace_bytes = 64.0 * 1024 * 1024;
  const ComputeCostModel costs(roofline, nullptr, workspace_bytes);
  const StepOptions options{.optimizer = Optimizer::sgd,
                            .input_source = InputSource::none,
                            .workspace_bytes = workspace_bytes};
  Trainer trainer(model, plan, build_step_programs(model, plan, costs, options).at(0), device,
                  layout, TrainerOptions{.optimizer = Optimizer::sgd, .seed = seed});

  const auto targets = target_layout(model);
  auto input = synthetic_step_input(
      {.seed = seed, .dataset_samples = mini_batch, .sample = sample, .targets = targets}, 0,
      mini_batch, trainer.input_first(), trainer.input_count());
  ModelStepCheck check;
  check.input_shape = {mini_batch, sample.c};
  check.input_shape.insert(check.input_shape.end(), sample.spatial.begin(), sample.spatial.end());
  check.input = input.volume;
  check.targets_shape = {mini_batch, static_cast<std::int64_t>(input.targets.size()) / mini_batch};
  check.targets = input.targets;
  for (std::size_t i = 0; i < model.layers().size(); ++i) {
    auto weights = trainer.parameters_of(i);
    if (weights.empty()) continue;
    check.layers.push_back({.layer = model.layers()[i].layer.name, .weights = std::move(weights)});
  }
  std::vector<std::size_t> kinked;
  for (std::size_t i = 0; i < model.layers().size(); ++i) {
    const LayerKind kind = model.layers()[i].layer.kind;
    if (kind == LayerKind::relu || kind == LayerKind::leaky_relu) kinked.push_back(i);
  }
  trainer.keep_outputs_of(kinked);
  FixedInput source(std::move(input));
  check.loss = trainer.step(source).loss;
  for (auto& layer : check.layers) {
    layer.gradients = trainer.gradients_of(model.index_of(layer.layer).value());
  }
  for (const std::size_t i : kinked) {
    check.kinks.push_back(
        {.layer = model.layers()[i].layer.name, .values = trainer.kept_output_of(i)});
  }
  return check;
}

}  // namespace tessera::kernels::real
