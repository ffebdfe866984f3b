// tessera layer-check: a model's convolution, pooling and transformer layers run on a local device
// on seeded random operands. Per layer, DIR/<layer>/ gets the operands and results as raw float32
// files (little-endian, C order) and case.json with the geometry, the shapes and each direction's
// median time: what analysis/torch_crosscheck.py needs to run the same layer in PyTorch on the
// same operands and compare outputs and times.
#include <filesystem>
#include <iostream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "command_guard.hpp"
#include "commands.hpp"
#include "option_checks.hpp"
#include "output_directory.hpp"
#include "raw_floats.hpp"
#include "scenario_target.hpp"
#include "tessera/core/common/atomic_file.hpp"
#include "tessera/core/common/input_error.hpp"
#include "tessera/core/point/profile_plan.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/profile/layer_check.hpp"

namespace tessera::app {
namespace {

namespace fs = std::filesystem;

struct LayerCheckSettings {
  std::string target;
  std::string device = "cpu";
  std::string output;
  std::vector<std::string> layers;
  std::optional<std::int64_t> mini_batch;
  std::size_t point = 0;
  int timed_runs = 5;
  std::uint32_t seed = 1;
};

nlohmann::json geometry_json(const kernels::LayerCheck& check) {
  if (const auto* conv = std::get_if<kernels::ConvolutionGeometry>(&check.geometry)) {
    return {{"op", conv->transposed ? "transposed_convolution" : "convolution"},
            {"in_channels", conv->in_channels},
            {"out_channels", conv->out_channels},
            {"groups", conv->groups},
            {"kernel", conv->kernel},
            {"stride", conv->stride},
            {"padding", conv->padding},
            {"dilation", conv->dilation}};
  }
  if (const auto* sequence = std::get_if<kernels::SequenceLayerGeometry>(&check.geometry)) {
    return {{"op", to_string(sequence->kind)},
            {"channels", sequence->channels},
            {"steps", sequence->steps},
            {"approximate", sequence->tanh_approximation ? "tanh" : "none"},
            {"heads", sequence->heads},
            {"causal", sequence->causal}};
  }
  const auto& pool = std::get<kernels::PoolingGeometry>(check.geometry);
  return {{"op", "pooling"},           {"mode", pool.max ? "max" : "average"},
          {"channels", pool.channels}, {"kernel", pool.kernel},
          {"stride", pool.stride},     {"padding", pool.padding}};
}

void write_case(const fs::path& folder, const kernels::LayerCheck& check,
                const kernels::Device& device) {
  fs::create_directories(folder);
  nlohmann::json tensors = nlohmann::json::object();
  for (const auto* group : {&check.operands, &check.results}) {
    for (const auto& tensor : *group) {
      write_raw_floats(folder / (tensor.name + ".f32"), tensor.values);
      tensors[tensor.name] = {{"file", tensor.name + ".f32"}, {"shape", tensor.shape}};
    }
  }
  nlohmann::json times = nlohmann::json::array();
  for (const auto& time : check.times) {
    times.push_back({{"direction", time.direction},
                     {"algorithm", time.algorithm},
                     {"median_seconds", time.median_seconds},
                     {"runs", time.runs}});
  }
  nlohmann::json names = {{"operands", nlohmann::json::array()},
                          {"results", nlohmann::json::array()}};
  for (const auto& tensor : check.operands) names["operands"].push_back(tensor.name);
  for (const auto& tensor : check.results) names["results"].push_back(tensor.name);
  const nlohmann::json description = {{"layer", check.layer},
                                      {"batch", check.batch},
                                      {"device", device.info().name},
                                      {"library", device.info().library},
                                      {"geometry", geometry_json(check)},
                                      {"tensors", tensors},
                                      {"operands", names["operands"]},
                                      {"results", names["results"]},
                                      {"times", times}};
  // case.json last: a folder with it is complete.
  write_file_atomically((folder / "case.json").string(), description.dump(2) + "\n");
}

int layer_check(const LayerCheckSettings& settings) {
  const LoadedScenario loaded = load_target(settings.target, settings.mini_batch);
  LoadedScenario one_point = loaded;
  one_point.points = {sweep_point_at(loaded, settings.point)};
  const auto device = open_device_option(settings.device);
  // The forward entry of each layer carries its shard shapes and undivided batch.
  std::vector<KernelToProfile> selected;
  std::set<std::string> found;
  const std::set<std::string> wanted(settings.layers.begin(), settings.layers.end());
  for (const auto& kernel : kernels_to_profile(one_point)) {
    if (kernel.direction != Direction::forward || kernel.window ||
        !kernels::checkable_layer(kernel.layer)) {
      continue;
    }
    if (!wanted.empty() && !wanted.contains(kernel.layer.name)) continue;
    if (!found.insert(kernel.layer.name).second) continue;
    selected.push_back(kernel);
  }
  // Sequence layers are not profiled (kernels_to_profile): self-attention runs whole on a rank,
  // on the point's mini-batch, on a device with sequence kernels (the CPU).
  for (const auto& layer : one_point.model.layers()) {
    if (!is_sequence_kind(layer.layer.kind) || !kernels::checkable_layer(layer.layer)) continue;
    if (device->sequences() == nullptr) {
      std::cerr << "skipping " << layer.layer.name << ": " << device->info().name
                << " has no kernels for sequence layers (the CPU has)\n";
      continue;
    }
    if (!wanted.empty() && !wanted.contains(layer.layer.name)) continue;
    if (!found.insert(layer.layer.name).second) continue;
    KernelToProfile kernel{.layer = layer.layer,
                           .inputs = layer.input_shapes,
                           .output = layer.output_shape,
                           .batch = one_point.points.front().config.mini_batch};
    kernel.shape = kernel_shape_key(layer.layer, layer.input_shapes, layer.output_shape);
    selected.push_back(kernel);
  }
  for (const auto& name : wanted) {
    if (!found.contains(name)) {
      throw InputError({}, "--layers",
                       "a convolution, pooling, GELU, affine layer-norm or biased self-attention "
                       "layer of the model, got '" +
                           name + "'");
    }
  }
  const fs::path output = settings.output.empty()
                              ? fs::path("results") / loaded.scenario.name / "layer-check"
                              : fs::path(settings.output);
  prepare_output_directory(output.string(), "--output");
  for (std::size_t i = 0; i < selected.size(); ++i) {
    const auto& kernel = selected[i];
    std::cerr << "[" << i + 1 << "/" << selected.size() << "] " << kernel.layer.name << " (batch "
              << kernel.batch << ", " << kernel.shape << ")\n";
    const auto check = kernels::check_layer(
        *device, kernel.layer, kernel.inputs.front(), kernel.output, kernel.batch,
        settings.seed + static_cast<std::uint32_t>(i), settings.timed_runs);
    write_case(output / kernel.layer.name, check, *device);
  }
  std::cout << "checked " << selected.size() << " layers on " << device->info().name << " -> "
            << output.string() << "\n";
  return kExitOk;
}

}  // namespace

void add_layer_check_command(CLI::App& cli, Action& action) {
  auto* command = cli.add_subcommand(
      "layer-check",
      "Run a model's convolution, pooling, GELU, affine layer-norm and biased self-attention "
      "layers on seeded "
      "random operands and write operands, results and times (for analysis/torch_crosscheck.py)");
  auto settings = std::make_shared<LayerCheckSettings>();
  command
      ->add_option("target", settings->target,
                   "Scenario file, 'default', or a zoo model name (one GPU, default mini-batch)")
      ->check(kNonEmptyText)
      ->required();
  command->add_option("--device", settings->device, "cpu or cuda:N")->capture_default_str();
  command->add_option("--output", settings->output,
                      "Directory for one folder per layer (default: "
                      "results/<scenario>/layer-check)");
  command->add_option("--layers", settings->layers, "Only these layers (names)")->delimiter(',');
  command
      ->add_option("--mini-batch", settings->mini_batch,
                   "With a model name: samples per GPU (default: the model's own, else 1)")
      ->check(whole_number_in(1, std::int64_t{1} << 24));
  command->add_option("--point", settings->point, "Sweep point whose shards run (index)")
      ->capture_default_str()
      ->check(kPointIndex);
  command
      ->add_option("--timed-runs", settings->timed_runs,
                   "Runs per direction after the one whose result is kept (median reported)")
      ->check(whole_number_in(1, 1000000))
      ->capture_default_str();
  command->add_option("--seed", settings->seed, "Seed of the random operands")
      ->capture_default_str()
      ->check(whole_number_in(0, std::numeric_limits<std::int64_t>::max()));
  command->callback([&action, settings] {
    action = [settings] { return run_guarded([&] { return layer_check(*settings); }); };
  });
}

}  // namespace tessera::app
