// Structural reading of a scenario file: every key known, every value of the right type and range.
// Cross-checks that need the model or the platform are in scenario_loader.cpp.
#include "scenario_parser.hpp"

#include <algorithm>
#include <cctype>

#include "remember_location.hpp"
#include "scenario_enums.hpp"
#include "tessera/core/common/dtype.hpp"
#include "tessera/core/common/plausible_figures.hpp"
#include "tessera/core/common/quantity.hpp"
#include "training_parser.hpp"

namespace tessera {
namespace {

void parse_model(Scenario& s, const YamlValue& value) {
  YamlMap map(value,
              {"zoo", "file", "options", "mini_batch", "dtype", "optimizer", "learning_rate"});
  auto& m = s.model;
  m.where = value.location();
  remember(s, value);
  const bool has_zoo = map.has("zoo"), has_file = map.has("file");
  if (has_zoo == has_file) {
    value.fail_problem(
        "give exactly one of 'zoo' (a built-in model name) or 'file' (a model file)");
  }
  if (auto zoo = map.optional("zoo")) {
    m.zoo_name = zoo->as_string();
    remember(s, *zoo);
  }
  if (auto file = map.optional("file")) {
    m.file = file->as_string();
    remember(s, *file);
  }
  if (auto options = map.optional("options")) {
    if (has_file) options->fail_problem("options apply to zoo models only");
    remember(s, *options);
    if (!options->is_map()) options->fail("a mapping of option names to values");
    for (const auto& entry : options->node()) {
      const auto key = options->derived(entry.first, options->key_path());
      if (!entry.first.IsScalar()) key.fail("an option name");
      const auto option =
          options->derived(entry.second, options->key_path() + "." + entry.first.Scalar());
      if (!option.is_scalar()) option.fail("a single value");
      if (m.options.count(entry.first.Scalar())) {
        throw InputError(key.location(), option.key_path(), "option appears more than once");
      }
      m.options[entry.first.Scalar()] = entry.second.Scalar();
      remember(s, option);
    }
  }
  if (auto batch = map.optional("mini_batch")) {
    m.mini_batch = batch->as_integer(1, 1 << 24);
    remember(s, *batch);
  }
  if (auto dtype = map.optional("dtype"))
    m.dtype = dtype_from_string(dtype->as_choice(dtype_names()));
  if (auto optimizer = map.optional("optimizer")) m.optimizer = parse_enum<Optimizer>(*optimizer);
  if (auto rate = map.optional("learning_rate")) {
    m.learning_rate = rate->as_number(1e-12, 10.0);
    remember(s, *rate);
  }
}

void parse_parallelism(Scenario& s, const YamlValue& value) {
  YamlMap map(
      value, {"data", "spatial", "model", "tensor", "gpus", "batch_norm_statistics", "data_split"});
  auto& p = s.parallelism;
  remember(s, value);
  if (auto data = map.optional("data")) {
    p.data = data->as_integer(1, 1 << 24);
    remember(s, *data);
  }
  if (auto tensor = map.optional("tensor")) {
    p.tensor = tensor->as_integer(1, 4096);
    remember(s, *tensor);
  }
  if (auto gpus = map.optional("gpus")) {
    p.gpus = gpus->as_integer(1, 1 << 24);
    remember(s, *gpus);
  }
  if (auto spatial = map.optional("spatial")) {
    YamlMap spatial_map(*spatial, {"grid", "until"});
    auto grid =
        spatial_map.required("grid", "a list of partitions per spatial axis, e.g. [4, 1, 1]");
    p.spatial_grid = grid.as_integer_list(1, 3, 1, 4096);
    remember(s, grid);
    if (auto until = spatial_map.optional("until")) {
      p.spatial_until = until->as_string();
      remember(s, *until);
    }
  }
  if (auto statistics = map.optional("batch_norm_statistics")) {
    p.batch_norm_statistics = parse_enum<BatchNormStatistics>(*statistics);
    remember(s, *statistics);
  }
  if (auto model = map.optional("model")) {
    YamlMap model_map(*model, {"degree", "stages", "placement", "micro_batches", "schedule"});
    auto degree = model_map.required("degree", "the number of GPUs the model is split over");
    p.model_degree = degree.as_integer(1, 4096);
    remember(s, degree);
    if (auto stages = model_map.optional("stages")) {
      remember(s, *stages);
      for (const auto& stage : stages->as_sequence(1)) p.stage_starts.push_back(stage.as_string());
    }
    if (auto placement = model_map.optional("placement")) {
      if (model_map.has("stages")) {
        placement->fail_problem("give either stages (contiguous) or placement (layer by layer)");
      }
      if (!placement->is_map()) placement->fail("a mapping of layer names to stages (0-based)");
      remember(s, *placement);
      for (const auto& entry : placement->node()) {
        const auto name = placement->derived(entry.first, placement->key_path()).as_string();
        const auto stage = placement->derived(entry.second, placement->key_path() + "." + name);
        p.placement.emplace_back(name, stage.as_integer(0, p.model_degree - 1));
      }
    }
    if (auto micro = model_map.optional("micro_batches")) {
      p.micro_batches = micro->as_integer(1, 1 << 20);
      remember(s, *micro);
    }
    if (auto schedule = model_map.optional("schedule")) {
      p.schedule = parse_enum<PipelineSchedule>(*schedule);
      remember(s, *schedule);
    }
  }
  if (auto split = map.optional("data_split")) {
    p.data_split = parse_enum<DataSplit>(*split);
    remember(s, *split);
    // A replica's share follows its GPU's speed; a replica of several GPUs (spatial or model
    // parts) would need the slowest part's, which the simulator does not derive yet.
    if (p.data_split == DataSplit::proportional &&
        (!p.spatial_grid.empty() || map.has("model") || p.tensor > 1)) {
      split->fail_problem(
          "data_split: proportional needs pure data parallelism (no spatial, model or tensor "
          "split)");
    }
  }
}

void parse_kernels(Scenario& s, const YamlValue& value) {
  YamlMap map(value, {"micro_batching"});
  if (auto micro = map.optional("micro_batching")) {
    YamlMap micro_map(*micro, {"policy", "mode", "workspace_limit"});
    auto& mb = s.micro_batching;
    if (auto policy = micro_map.optional("policy"))
      mb.policy = parse_enum<MicroBatchPolicy>(*policy);
    if (auto mode = micro_map.optional("mode")) mb.mode = parse_enum<MicroBatchMode>(*mode);
    if (auto limit = micro_map.optional("workspace_limit")) {
      // The step reserves the whole limit as its workspace pool, so a limit past any memory
      // would only make every point not fit.
      mb.workspace_limit_bytes = limit->as_quantity(QuantityKind::bytes);
      if (mb.workspace_limit_bytes > kLargestMemoryBytes) {
        limit->fail("a size from 0 B up to 1 EiB such as 512 MiB");
      }
    }
  }
}

void parse_memory(Scenario& s, const YamlValue& value) {
  YamlMap map(value, {"device_capacity", "offload", "allocation", "shard", "recompute"});
  if (auto capacity = map.optional("device_capacity")) {
    const double bytes = capacity->as_quantity(QuantityKind::bytes);
    if (const auto sizes = memory_cap_range(); !sizes.holds(bytes)) {
      capacity->fail(std::string("a size ") + sizes.text + " such as 16 GiB");
    }
    s.memory.device_capacity_bytes = bytes;
    remember(s, *capacity);
  }
  if (auto offload = map.optional("offload"))
    s.memory.offload = parse_enum<OffloadPolicy>(*offload);
  if (auto allocation = map.optional("allocation")) {
    s.memory.allocation = parse_enum<MemoryAllocation>(*allocation);
    if (s.memory.allocation == MemoryAllocation::network_wide &&
        s.memory.offload != OffloadPolicy::none) {
      allocation->fail_problem(
          "offloading (memory.offload) moves feature maps layer by layer: it needs layer_wise "
          "allocation, not network_wide");
    }
  }
  if (auto shard = map.optional("shard")) {
    s.memory.shard = parse_enum<ShardLevel>(*shard);
    remember(s, *shard);
  }
  if (auto recompute = map.optional("recompute")) {
    s.memory.recompute = parse_enum<RecomputePolicy>(*recompute);
    // Both drop feature maps between forward and backward; one way at a time.
    if (s.memory.recompute != RecomputePolicy::none &&
        (s.memory.offload != OffloadPolicy::none ||
         s.memory.allocation == MemoryAllocation::network_wide)) {
      recompute->fail_problem(
          "recomputing activations needs layer_wise allocation and no offloading "
          "(memory.offload: none)");
    }
  }
}

void parse_io(Scenario& s, const YamlValue& value) {
  YamlMap map(value, {"format", "dataset", "read_sub_volume", "prefetch", "stored_dtype", "store",
                      "samples", "validation_samples"});
  remember(s, value);
  if (auto format = map.optional("format")) {
    s.io.format = parse_enum<DatasetFormat>(*format);
    remember(s, *format);
  }
  if (auto dataset = map.optional("dataset")) {
    s.io.dataset = dataset->as_string();
    remember(s, *dataset);
  }
  if (auto sub = map.optional("read_sub_volume")) s.io.read_sub_volume = sub->as_bool();
  if (auto prefetch = map.optional("prefetch")) s.io.prefetch = prefetch->as_bool();
  if (auto stored = map.optional("stored_dtype")) {
    s.io.stored_dtype = parse_enum<StoredDType>(*stored);
    remember(s, *stored);
  }
  if (auto store = map.optional("store")) {
    s.io.store = parse_enum<DataStore>(*store);
    remember(s, *store);
  }
  if (auto samples = map.optional("samples")) {
    s.io.samples = samples->as_integer(1);
    remember(s, *samples);
  }
  if (auto validation = map.optional("validation_samples")) {
    s.io.validation_samples = validation->as_integer(0);
    remember(s, *validation);
  }
  if (auto stored = map.optional("stored_dtype");
      stored && s.io.format != DatasetFormat::hdf5 && s.io.stored_dtype != StoredDType::float32) {
    stored->fail_problem(
        "'stored_dtype' describes the volumes in the data set's files: it needs format hdf5 "
        "(synthetic samples are generated on the device)");
  }
  if (s.io.store != DataStore::none && s.io.format != DatasetFormat::hdf5) {
    value.fail_problem(
        "'store' keeps samples read from files: it needs format hdf5 (synthetic "
        "samples are generated on the device and read from nowhere)");
  }
}

void parse_platform(Scenario& s, const YamlValue& value) {
  YamlMap map(value, {"preset", "cluster", "nodes", "simgrid_xml"});
  remember(s, value);
  if (map.has("preset") == map.has("cluster")) {
    value.fail_problem("give exactly one of 'preset' (a built-in cluster) or 'cluster' (a file)");
  }
  if (auto preset = map.optional("preset")) {
    s.platform.preset = preset->as_string();
    remember(s, *preset);
  }
  if (auto cluster = map.optional("cluster")) {
    s.platform.cluster_file = cluster->as_string();
    remember(s, *cluster);
  }
  if (auto nodes = map.optional("nodes")) {
    s.platform.nodes = nodes->as_integer(1, 1 << 20);
    remember(s, *nodes);
  }
  if (auto xml = map.optional("simgrid_xml")) {
    YamlMap xml_map(*xml, {"file", "gpu_hosts", "gpus_per_node"});
    auto file = xml_map.required("file", "a SimGrid platform XML file");
    s.platform.simgrid_xml = file.as_string();
    remember(s, file);
    auto hosts = xml_map.required("gpu_hosts", "a host-name pattern with {i}, e.g. gpu-{i}");
    s.platform.simgrid_gpu_hosts = hosts.as_string();
    if (s.platform.simgrid_gpu_hosts.find("{i}") == std::string::npos) {
      hosts.fail("a host-name pattern containing {i} (the GPU rank), e.g. gpu-{i}");
    }
    remember(s, hosts);
    if (auto per_node = xml_map.optional("gpus_per_node")) {
      s.platform.simgrid_gpus_per_node = per_node->as_integer(1, 64);
    }
  }
}

void parse_sweep(Scenario& s, const YamlValue& value) {
  YamlMap map(value, {"scaling", "grow", "gpus"});
  SweepSection sweep;
  remember(s, value);
  if (auto scaling = map.optional("scaling")) {
    sweep.scaling = parse_enum<Scaling>(*scaling);
    remember(s, *scaling);
  }
  if (auto grow = map.optional("grow")) {
    sweep.grow = parse_enum<GrowAxis>(*grow);
    remember(s, *grow);
  }
  auto gpus = map.required("gpus", "a list of GPU counts, e.g. [4, 8, 16]");
  for (const auto& item : gpus.as_sequence(1, 256)) {
    const auto count = item.as_integer(1, 1 << 24);
    if (std::find(sweep.gpus.begin(), sweep.gpus.end(), count) != sweep.gpus.end()) {
      item.fail_problem("GPU count " + std::to_string(count) + " appears twice in the sweep");
    }
    sweep.gpus.push_back(count);
    sweep.gpus_where.push_back(item.location());
  }
  remember(s, gpus);
  if (sweep.scaling == Scaling::weak && sweep.grow != GrowAxis::data) {
    value.fail_problem(
        "weak scaling keeps the work per replica fixed and adds replicas; use "
        "'grow: data' (strong scaling may grow a spatial axis)");
  }
  s.sweep = std::move(sweep);
}

void parse_outputs(Scenario& s, const YamlValue& value) {
  YamlMap map(value, {"directory", "trace_gpus"});
  if (auto directory = map.optional("directory")) {
    s.outputs.directory = directory->as_string();
    remember(s, *directory);
  }
  if (auto trace = map.optional("trace_gpus")) {
    s.outputs.trace_gpus = trace->as_integer_list(0, 1024, 0, (1 << 24) - 1);
    remember(s, *trace);
  }
}

void parse_sim(Scenario& s, const YamlValue& value) {
  YamlMap map(value, {"network_model", "allreduce", "gradient_bucket", "mode"});
  if (auto mode = map.optional("mode")) s.sim.mode = mode->as_choice({"symmetric", "full"});
  if (auto model = map.optional("network_model")) {
    // LV08 (SimGrid's default) inflates latencies 13x; CM02 is the plain alpha-beta model.
    s.sim.network_model = model->as_choice({"CM02", "LV08", "SMPI"});
  }
  if (auto allreduce = map.optional("allreduce")) {
    s.sim.allreduce = parse_enum<CollectiveAlgorithm>(*allreduce);
  }
  if (auto bucket = map.optional("gradient_bucket")) {
    s.sim.gradient_bucket_bytes = bucket->as_quantity(QuantityKind::bytes);
    if (s.sim.gradient_bucket_bytes < 1) bucket->fail("a positive size such as 25 MiB");
  }
}

void parse_real(Scenario& s, const YamlValue& value) {
  YamlMap map(value, {"warmup_steps", "measured_steps", "deterministic"});
  if (auto warmup = map.optional("warmup_steps"))
    s.real.warmup_steps = warmup->as_integer(0, 1000000);
  if (auto measured = map.optional("measured_steps")) {
    s.real.measured_steps = measured->as_integer(1, 1000000);
  }
  if (auto deterministic = map.optional("deterministic")) {
    s.real.deterministic = deterministic->as_bool();
  }
}

}  // namespace

constexpr std::size_t kLongestScenarioName = 128;

Scenario parse_scenario(const YamlValue& root) {
  YamlMap map(root, {"name", "description", "model", "parallelism", "kernels", "memory", "io",
                     "platform", "sweep", "outputs", "sim", "real", "training"});
  Scenario s;
  s.file = root.location().file;
  s.name = map.required("name", "a short name for the scenario").as_string();
  bool valid_name = s.name.front() != '.';
  for (char c : s.name) {
    valid_name &= std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  }
  if (!valid_name) {
    map.required("name", "")
        .fail("a name of letters, digits, '-', '_' or '.', not starting with '.' (it names files)");
  }
  // The results folder and its files are named after it, and a file name has at most 255 bytes.
  if (s.name.size() > kLongestScenarioName) {
    map.required("name", "")
        .fail("a name of at most " + std::to_string(kLongestScenarioName) +
              " characters (it names files), not " + std::to_string(s.name.size()));
  }
  if (auto description = map.optional("description")) s.description = description->as_string();
  parse_model(s, map.required("model", "a mapping with 'zoo' or 'file', and 'mini_batch'"));
  if (auto v = map.optional("parallelism")) parse_parallelism(s, *v);
  if (auto v = map.optional("kernels")) parse_kernels(s, *v);
  if (auto v = map.optional("memory")) parse_memory(s, *v);
  if (auto v = map.optional("io")) parse_io(s, *v);
  if (auto v = map.optional("platform")) {
    parse_platform(s, *v);
  } else {
    s.platform.preset = "lassen";
  }
  if (auto v = map.optional("sweep")) parse_sweep(s, *v);
  if (auto v = map.optional("outputs")) parse_outputs(s, *v);
  if (auto v = map.optional("sim")) parse_sim(s, *v);
  if (auto v = map.optional("real")) parse_real(s, *v);
  if (auto v = map.optional("training")) parse_training(s, *v);
  if (s.outputs.directory.empty()) s.outputs.directory = "results/" + s.name;
  remember(s, root);
  return s;
}

}  // namespace tessera
