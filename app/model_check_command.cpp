// tessera model-check: one training step of a whole model on one process's device, from seeded
// weights and one batch of the model's synthetic task. DIR/ gets the batch, every layer's weights
// before the step and their gradients, every ReLU's output (the sides its kinks took) as raw
// float32 files, and case.json with the model's
// description (as `describe --json` gives it), the loss and the files' shapes: what
// analysis/torch_model_step.py needs to build the same model in PyTorch, load the same weights,
// take the same step and compare the loss and every gradient.
#include <filesystem>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "command_guard.hpp"
#include "commands.hpp"
#include "option_checks.hpp"
#include "output_directory.hpp"
#include "raw_floats.hpp"
#include "scenario_target.hpp"
#include "tessera/core/common/atomic_file.hpp"
#include "tessera/core/common/input_error.hpp"
#include "tessera/core/model/model_json.hpp"
#include "tessera/kernels/communicator.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/real/model_step_check.hpp"

namespace tessera::app {
namespace {

namespace fs = std::filesystem;

struct ModelCheckSettings {
  std::string target;
  std::string device = "cpu";
  std::string output;
  std::optional<std::int64_t> mini_batch;
  std::size_t point = 0;
  std::uint64_t seed = 1;
};

nlohmann::json tensor_entry(const std::string& file, const std::vector<std::int64_t>& shape) {
  return {{"file", file}, {"shape", shape}};
}

int model_check(const ModelCheckSettings& settings) {
  const LoadedScenario loaded = load_target(settings.target, settings.mini_batch);
  const std::int64_t mini_batch = sweep_point_at(loaded, settings.point).config.mini_batch;
  const auto device = open_device_option(settings.device);
  auto world = kernels::mpi_world();
  if (world->size() != 1) {
    throw InputError(
        {}, "mpirun",
        "one process (model-check takes one rank's step), got " + std::to_string(world->size()));
  }
  const fs::path output = settings.output.empty()
                              ? fs::path("results") / loaded.scenario.name / "model-check"
                              : fs::path(settings.output);
  prepare_output_directory(output.string(), "--output");
  kernels::real::ModelStepCheck check;
  try {
    check =
        kernels::real::check_model_step(loaded.model, mini_batch, *device, *world, settings.seed);
  } catch (const std::invalid_argument& error) {
    const auto& where = loaded.scenario.where;
    throw InputError(where.count("model") ? where.at("model") : SourceLocation{settings.target},
                     "model", error.what());
  }

  write_raw_floats(output / "input.f32", check.input);
  write_raw_floats(output / "targets.f32", check.targets);
  nlohmann::json parameters = nlohmann::json::array();
  for (const auto& layer : check.layers) {
    const auto floats = static_cast<std::int64_t>(layer.weights.size());
    write_raw_floats(output / (layer.layer + ".weights.f32"), layer.weights);
    write_raw_floats(output / (layer.layer + ".gradients.f32"), layer.gradients);
    parameters.push_back({{"layer", layer.layer},
                          {"weights", tensor_entry(layer.layer + ".weights.f32", {floats})},
                          {"gradients", tensor_entry(layer.layer + ".gradients.f32", {floats})}});
  }
  nlohmann::json kinks = nlohmann::json::array();
  for (const auto& kink : check.kinks) {
    const auto& shape =
        loaded.model.layers()[loaded.model.index_of(kink.layer).value()].output_shape;
    std::vector<std::int64_t> dimensions{mini_batch, shape.c};
    dimensions.insert(dimensions.end(), shape.spatial.begin(), shape.spatial.end());
    write_raw_floats(output / (kink.layer + ".output.f32"), kink.values);
    kinks.push_back(
        {{"layer", kink.layer}, {"output", tensor_entry(kink.layer + ".output.f32", dimensions)}});
  }
  auto model = to_json(loaded.model);
  model["mini_batch"] = mini_batch;
  const nlohmann::json description = {
      {"model", model},
      {"mini_batch", mini_batch},
      {"seed", settings.seed},
      {"device", device->info().name},
      {"library", device->info().library},
      {"optimizer", "sgd"},
      {"loss", check.loss},
      {"tensors",
       {{"input", tensor_entry("input.f32", check.input_shape)},
        {"targets", tensor_entry("targets.f32", check.targets_shape)}}},
      {"parameters", parameters},
      {"kinks", kinks}};
  // case.json last: a folder with it is complete.
  write_file_atomically((output / "case.json").string(), description.dump(2) + "\n");
  std::cout << "one step of " << loaded.model.name() << " at a mini-batch of " << mini_batch
            << " on " << device->info().name << ": loss " << check.loss << ", "
            << check.layers.size() << " layers' weights and gradients -> " << output.string()
            << "\n";
  return kExitOk;
}

}  // namespace

void add_model_check_command(CLI::App& cli, Action& action) {
  auto* command = cli.add_subcommand(
      "model-check",
      "Train one step of a whole model on one process's device from seeded weights and a batch of "
      "its synthetic task, and write the batch, the weights, the loss and every gradient (for "
      "analysis/torch_model_step.py)");
  auto settings = std::make_shared<ModelCheckSettings>();
  command
      ->add_option("target", settings->target,
                   "Scenario file, 'default', or a zoo model name (its default options)")
      ->check(kNonEmptyText)
      ->required();
  command->add_option("--device", settings->device, "cpu or cuda:N")->capture_default_str();
  command->add_option("--output", settings->output,
                      "Directory for the files (default: results/<scenario>/model-check)");
  command
      ->add_option("--mini-batch", settings->mini_batch,
                   "With a model name: samples (default: the model's own, else 1)")
      ->check(whole_number_in(1, std::int64_t{1} << 24));
  command->add_option("--point", settings->point, "Sweep point whose mini-batch is used (index)")
      ->capture_default_str()
      ->check(kPointIndex);
  command->add_option("--seed", settings->seed, "Seed of the weights and the batch")
      ->capture_default_str()
      ->check(whole_number_in(0, std::numeric_limits<std::int64_t>::max()));
  command->callback([&action, settings] {
    action = [settings] { return run_guarded([&] { return model_check(*settings); }); };
  });
}

}  // namespace tessera::app
