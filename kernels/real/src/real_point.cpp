#include "tessera/kernels/real/real_point.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <numeric>
#include <optional>
#include <set>

#include "interleaved_profile.hpp"
#include "measured_training.hpp"
#include "rank_values.hpp"
#include "sequence_executors.hpp"
#include "tensor_split_support.hpp"
#include "tessera/core/common/quantity.hpp"
#include "tessera/core/cost/cost_model.hpp"
#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/micro_batching/network_micro_batch_plan.hpp"
#include "tessera/core/model/training_task.hpp"
#include "tessera/core/point/point_input.hpp"
#include "tessera/core/point/point_programs.hpp"
#include "tessera/core/point/program_recipe.hpp"
#include "tessera/core/result/point_identity.hpp"
#include "tessera/core/strategy/input_source.hpp"
#include "tessera/core/strategy/step_program.hpp"
#include "tessera/kernels/cpu/cpu_threads.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/device_inventory.hpp"
#include "tessera/kernels/real/step_input_source.hpp"
#include "tessera/kernels/real/trainer.hpp"
#include "timeline_gather.hpp"

namespace tessera::kernels::real {
namespace {

// The first layer of a recurrent model's kinds (lstm, embedding, attention, projection), if any.
const ResolvedLayer* first_sequence_layer(const ModelGraph& model) {
  for (const auto& layer : model.layers()) {
    if (is_sequence_kind(layer.layer.kind)) return &layer;
  }
  return nullptr;
}

PointResult point_skeleton(const LoadedScenario& loaded, const SweepPoint& point) {
  return point_identity(loaded.scenario.name, static_cast<std::int64_t>(point.index), "real",
                        point.config);
}

// This rank's device: a GPU per rank of the node when there are any, else the CPU.
std::string device_name_for_rank() {
  const auto inventory = discover_devices();
  std::vector<std::string> gpus;
  for (const auto& device : inventory.devices) {
    if (device.kind == "cuda") gpus.push_back("cuda:" + std::to_string(device.index));
  }
  if (gpus.empty()) return "cpu";
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  const auto local_rank = local != nullptr ? std::strtoul(local, nullptr, 10) : 0UL;
  return gpus[local_rank % gpus.size()];
}

// Ordered by precedence: the worst outcome of any rank decides the point's.
enum class Outcome { ok = 0, does_not_fit = 1, failed = 2, bad_input = 3 };

// The point's ranks that share this machine: its ranks, or fewer where mpirun says it put fewer
// on each node (ranks fill nodes in order).
int ranks_on_this_machine(const Communicator& ranks_of_point) {
  int ranks = ranks_of_point.size();
  if (const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE"); local != nullptr) {
    ranks = std::min(ranks, std::max(1, std::atoi(local)));
  }
  return ranks;
}

// The profiles of this device measured with other library versions, which may name algorithms
// the device lacks (those plans then run the library's choice): empty when there are none.
std::string other_library_versions(const ProfileDatabase* profiles, const DeviceInfo& device) {
  if (profiles == nullptr) return "";
  std::set<std::string> others;
  for (const auto& source : profiles->sources()) {
    if (source.device == device.name && !source.libraries.empty() &&
        source.libraries != device.library) {
      others.insert(source.libraries);
    }
  }
  std::string text;
  for (const auto& libraries : others) text += (text.empty() ? "" : "; ") + libraries;
  return text.empty() ? ""
                      : "profiles of " + device.name + " measured with " + text +
                            ", this device runs " + device.library;
}

// `ranks`: the point's ranks, this one among them.
PointResult train_point(const LoadedScenario& loaded, const SweepPoint& point, Communicator& ranks,
                        const ProfileDatabase* profiles, PointResult result,
                        MeasuredTimeline* timeline, InterleavedProfile* interleaved) {
  const auto& config = point.config;
  const std::string device_name = device_name_for_rank();
  if (const auto reason =
          unsupported_tensor_split(loaded.model, point.plan, device_name != "cpu")) {
    result.status = PointStatus::skipped;
    result.note = *reason;
    return result;
  }
  // Weights are sharded over the ranks summing the same gradients: a stage's replicas and
  // spatial parts (step_program.cpp's shard_ways).
  if (loaded.scenario.memory.shard == ShardLevel::weights &&
      config.data * config.spatial_parts() > 1) {
    if (const auto reason = unsupported_weight_sharding(loaded.model)) {
      result.status = PointStatus::skipped;
      result.note = *reason;
      return result;
    }
  }
  if (config.model_degree > 1 && device_name != "cpu") {
    // NCCL matches a pair's messages in posting order on one stream: a pipeline's sends and
    // receives in both directions would wait for each other there.
    result.status = PointStatus::skipped;
    result.note =
        "model-parallel stages on GPUs are not yet run by the real backend (stage "
        "transfers over NCCL need their own streams); CPU ranks run them";
    return result;
  }
  if (const auto* sequence = first_sequence_layer(loaded.model);
      sequence != nullptr && device_name != "cpu") {
    // Every rank finds a GPU or none alike (device_name_for_rank), so all skip together.
    result.status = PointStatus::skipped;
    result.note = "layer '" + sequence->layer.name + "' (" + to_string(sequence->layer.kind) +
                  "): recurrent models' layers are not yet run on GPUs by the real backend "
                  "(cuDNN's RNN is not wired); CPU ranks run them (oneDNN)";
    return result;
  }
  std::optional<CpuThreads> threads;
  // A CPU rank holds what the scenario's memory.device_capacity allows, else its share of the
  // machine's memory (the ranks on one machine share it); a GPU what the scenario caps it at,
  // else what it has.
  std::optional<double> capacity = loaded.scenario.memory.device_capacity_bytes;
  if (device_name == "cpu") {
    const int ranks_here = ranks_on_this_machine(ranks);
    threads = share_cpu_cores(ranks_here);
    if (!capacity) capacity = cpu_memory_share_bytes(ranks_here);
  }
  const std::unique_ptr<Device> device = open_device(device_name, capacity);
  const double device_capacity = capacity.value_or(device->info().memory_bytes);
  const std::string library_mismatch = other_library_versions(profiles, device->info());
  if (!library_mismatch.empty() && ranks.rank() == 0) {
    std::cerr << "warning: point " << point.index << ": " << library_mismatch << "\n";
  }
  std::unique_ptr<Communicator> nccl;
  Communicator* transport = &ranks;
  if (device->info().kind == "cuda") {
    nccl = nccl_over(ranks);
    transport = nccl.get();
  }
  const Scenario& scenario = loaded.scenario;
  // Each replica's samples: the shares the simulator plays too (from the scenario's cluster and
  // profiles, not from this machine's ranks). They differ only under pure data parallelism, so
  // that ranks and replicas coincide.
  std::vector<std::int64_t> replica_batches;
  if (scenario.parallelism.data_split != DataSplit::equal) {
    replica_batches = point_batches_of_ranks(loaded, point, profiles);
  }
  auto layout = make_rank_layout(*transport, config, replica_batches);
  const ShardPlan plan = plan_at_mini_batch(loaded, point.plan, layout.replica_batch);
  const std::int64_t warmup = scenario.real.warmup_steps;
  const std::int64_t measured = std::max<std::int64_t>(1, scenario.real.measured_steps);

  // Planned from the profiles of the device this rank runs on (the scenario's platform may name
  // another), and recorded as the plan that ran.
  auto roofline = roofline_of(loaded.cluster.gpu);
  roofline.device = device->info().name;
  // The program the simulator would play for this device: a GPU all-reduces beside compute, a
  // CPU rank holds its compute up for it (every bucket waited for where it is queued).
  const auto input_plan = plan_input(loaded, config.gpus());
  const bool overlaps = device->info().kind == "cuda";
  Outcome outcome = Outcome::ok;
  std::string problem;
  std::unique_ptr<Trainer> trainer;
  std::unique_ptr<StepInputSource> source;
  std::optional<InputError> bad_input;
  OffloadDecision offload;
  try {
    // The offload policy: dyn tries no offloading, conv, all, then all with the memory-optimal
    // algorithms, and keeps the first whose tensors this device holds (as vDNN decides, at run
    // time: what the device holds is measured, not estimated).
    const auto& sample = loaded.model.layers().front().output_shape;
    // A data set that does not fit the model stops the run before the trainer is built.
    std::optional<io::DatasetIndex> dataset;
    if (scenario.io.format == DatasetFormat::hdf5) {
      dataset = checked_hdf5_dataset(scenario.io, sample, target_layout(loaded.model));
    }
    const auto candidates = offload_candidates(scenario.memory.offload);
    for (std::size_t c = 0; c < candidates.size() && !trainer; ++c) {
      offload = candidates[c];
      const ProgramRecipe recipe{.scenario = &scenario,
                                 .offload = offload,
                                 .input_source = input_plan.later_epochs,
                                 .overlaps_communication = overlaps};
      const auto costs = recipe.costs(roofline, profiles);
      const auto micro_batching = plan_network(loaded.model, plan, costs, scenario.model.dtype);
      result.micro_batching = to_json(micro_batching);
      auto programs = recipe.build(loaded.model, plan, costs, micro_batching);
      try {
        trainer = std::make_unique<Trainer>(
            loaded.model, plan, std::move(programs.at(static_cast<std::size_t>(layout.stage))),
            *device, layout,
            TrainerOptions{
                .optimizer = scenario.model.optimizer,
                .learning_rate = static_cast<float>(scenario.model.learning_rate.value_or(0.0)),
                .deterministic = scenario.real.deterministic});
      } catch (const OutOfDeviceMemory&) {
        if (c + 1 == candidates.size()) throw;
      }
    }
    const InputPlacement placement{.samples_before = layout.samples_before,
                                   .mini_batch = layout.replica_batch,
                                   .global_batch = layout.global_batch,
                                   .first = trainer->input_first(),
                                   .count = trainer->input_count()};
    if (dataset) {
      // A prefetching step reads the next step's samples: one step more than are trained.
      source = hdf5_input_source(*dataset, scenario.io, target_layout(loaded.model), placement,
                                 warmup + measured + 1, input_plan.later_epochs, input_plan.staged);
    } else {
      source = synthetic_input_source(
          {.seed = 1,
           .dataset_samples = std::max<std::int64_t>(64, config.global_batch()),
           .sample = sample,
           .targets = target_layout(loaded.model)},
          placement);
    }
  } catch (const InputError& error) {
    outcome = Outcome::bad_input;
    bad_input.emplace(error);
  } catch (const OutOfDeviceMemory& error) {
    outcome = Outcome::does_not_fit;
    // In use when refused (capacity - free) plus the refused block: what the rank needs at least.
    const double has = device_capacity;
    problem = "does not fit: needs at least " +
              format_bytes(has - error.available_bytes() + error.requested_bytes()) + ", has " +
              format_bytes(has) + " (" + device_name + ")";
  } catch (const std::exception& error) {
    outcome = Outcome::failed;
    problem = error.what();
  }
  // Every rank learns whether all could start, so that none waits in a collective for a rank
  // that gave up.
  const auto outcomes = gather_values(ranks, static_cast<double>(outcome));
  const auto worst = static_cast<Outcome>(*std::max_element(outcomes.begin(), outcomes.end()));
  result.device_capacity_bytes = device_capacity;
  result.memory_provenance = Provenance::measured;
  if (worst == Outcome::bad_input) {
    throw EveryRankInputError(bad_input ? *bad_input
                                        : InputError({}, "io.dataset",
                                                     "another rank found the data set malformed "
                                                     "(see its message)"));
  }
  if (worst != Outcome::ok) {
    result.status =
        worst == Outcome::does_not_fit ? PointStatus::does_not_fit : PointStatus::failed;
    result.fits = worst != Outcome::does_not_fit;
    result.note = problem.empty() ? "another rank could not start (see its messages)"
                                  : "rank " + std::to_string(ranks.rank()) + ": " + problem;
    if (outcome != Outcome::ok)
      std::fprintf(stderr, "rank %d: %s\n", ranks.rank(), problem.c_str());
    return result;
  }

  // The staging phase: the slowest rank's.
  const auto staging = gather_values(ranks, source->stage());
  result.staging_seconds = *std::max_element(staging.begin(), staging.end());
  // A device of its own, so that what the re-timing allocates is not counted as the trainer's.
  std::unique_ptr<Device> profiling_device;
  std::unique_ptr<InterleavedProfiler> profiler;
  if (interleaved != nullptr && profiles != nullptr) {
    profiling_device = open_device(device_name);
    profiler = interleaved_profiler_for(loaded, point, trainer->program(), ranks, *profiling_device,
                                        *profiles, *interleaved);
  }
  const auto measurement = train(*trainer, *source, ranks, warmup, measured, input_plan,
                                 profiler ? std::function<void(double)>([&](double step_seconds) {
                                   profiler->measure_for(step_seconds);
                                 })
                                          : std::function<void(double)>());
  if (interleaved != nullptr) {
    gather_interleaved_rows(ranks, profiler.get(), device->info(), *interleaved);
  }
  if (!measurement.diverged.empty()) {
    result.status = PointStatus::failed;
    result.note = measurement.diverged + "; " + loss_summary(measurement.losses);
    if (ranks.rank() == 0) std::fprintf(stderr, "%s\n", measurement.diverged.c_str());
    return result;
  }
  const auto steps = gather_values(ranks, measurement.typical.step_seconds);
  const auto first_epoch_steps = gather_values(ranks, measurement.first_epoch_step_seconds);
  const auto busiest =
      static_cast<int>(std::max_element(steps.begin(), steps.end()) - steps.begin());
  // The busiest rank's breakdown, memory and step index.
  const auto& b = measurement.typical.breakdown;
  std::vector<double> figures{b.compute_seconds,
                              b.halo_seconds,
                              b.allreduce_seconds,
                              b.other_communication_seconds,
                              b.io_seconds,
                              b.offload_seconds,
                              b.idle_seconds,
                              measurement.typical.memory.average_bytes(),
                              measurement.typical.offloaded_bytes};
  figures.push_back(static_cast<double>(measurement.typical_step));
  figures = values_of_rank(ranks, busiest, std::move(figures));
  if (timeline != nullptr) {
    // The same step on every traced rank: the one the result reports.
    const auto step = static_cast<std::size_t>(figures.back());
    const auto& traced = loaded.scenario.outputs.trace_gpus;
    const std::set<int> wanted(traced.begin(), traced.end());
    *timeline =
        gather_timeline(ranks, measurement.timelines.at(step), measurement.memory.at(step), wanted);
  }
  figures.pop_back();
  result.step_seconds = steps[static_cast<std::size_t>(busiest)];
  result.input_source = to_string(measurement.typical_source);
  const double first_epoch = *std::max_element(first_epoch_steps.begin(), first_epoch_steps.end());
  result.first_epoch_step_seconds = first_epoch > 0 ? first_epoch : result.step_seconds;
  result.breakdown = {.compute_seconds = figures[0],
                      .halo_seconds = figures[1],
                      .allreduce_seconds = figures[2],
                      .other_communication_seconds = figures[3],
                      .io_seconds = figures[4],
                      .offload_seconds = figures[5],
                      .idle_seconds = figures[6]};
  result.average_memory_bytes = figures[7];
  result.offloaded_bytes = figures[8];
  result.layer_compute =
      layer_times_of_computing_ranks(ranks, steps, measurement.typical.layer_compute);
  const auto memory = gather_values(ranks, trainer->peak_bytes());
  result.peak_memory_bytes = *std::max_element(memory.begin(), memory.end());
  const auto plan_counts = trainer->convolution_plan_counts();
  const auto unplanned = gather_values(ranks, static_cast<double>(plan_counts.without_plan));
  const auto unplanned_total = std::accumulate(unplanned.begin(), unplanned.end(), 0.0);
  const auto replaced = gather_values(ranks, static_cast<double>(plan_counts.replaced));
  const auto replaced_total = std::accumulate(replaced.begin(), replaced.end(), 0.0);
  result.samples_per_second = result.step_seconds > 0
                                  ? static_cast<double>(config.global_batch()) / result.step_seconds
                                  : 0;
  result.time_provenance = Provenance::measured;
  result.compute_provenance = Provenance::measured;
  result.note =
      "measured on " + device->info().name + " (" + device->info().library + "), " +
      std::to_string(config.gpus()) + " rank(s); " + std::to_string(warmup) + " warm-up + " +
      std::to_string(measured) + " measured steps, the median step of rank " +
      std::to_string(busiest) + " (the slowest); " + loss_summary(measurement.losses) +
      "; rank 0's " + step_times(measurement.step_seconds, warmup) +
      "; input: " + source->description() +
      (threads ? "; " + std::to_string(threads->threads) + " compute thread(s) per rank (" +
                     (threads->from_environment
                          ? std::string("OMP_NUM_THREADS")
                          : "the cores shared by the point's ranks on this machine") +
                     ")"
               : std::string()) +
      "; memory: the most the trainer held at once (tensors, parameters, optimizer state; "
      "outputs and gradients allocated and released layer by layer)";
  if (loaded.scenario.memory.shard != ShardLevel::none) {
    result.note +=
        "; memory.shard: each rank holds 1/N of what the level names, with the buffers the "
        "memory plan counts (two gradient buckets whole while summed, one layer's weights "
        "gathered whole)";
  }
  if (profiles == nullptr) {
    result.note +=
        "; convolutions undivided as the library itself chooses them within the workspace "
        "limit (oneDNN: its automatic implementation on its preferred layouts; cuDNN: its "
        "first heuristic; no --profiles)";
  } else if (point.config.spatial_parts() > 1) {
    result.note +=
        "; convolutions run as the micro-batching plan from the profiles (split layers on "
        "their haloed windows, each as the step program planned it from the windows' own "
        "rows; a window without rows runs the library's choice)";
  } else {
    result.note += "; convolutions run as the micro-batching plan from the profiles";
  }
  if (profiles != nullptr && unplanned_total > 0) {
    result.note += "; " + std::to_string(static_cast<long long>(unplanned_total)) +
                   " convolution problem(s) over the ranks had no rows in the profiles and ran "
                   "the library's choice";
  }
  if (!library_mismatch.empty()) result.note += "; " + library_mismatch;
  if (replaced_total > 0) {
    const std::string replaced_text =
        std::to_string(static_cast<long long>(replaced_total)) +
        " convolution plan(s) over the ranks named an algorithm " + device->info().name +
        " does not offer (profiles of another device or library version?) and ran the "
        "library's choice";
    result.note += "; " + replaced_text;
    if (ranks.rank() == 0)
      std::cerr << "warning: point " << point.index << ": " << replaced_text << "\n";
  }
  if (scenario.real.deterministic) {
    result.note +=
        " (real.deterministic: only algorithms the library reports deterministic; a planned "
        "one that is not runs as the library's first deterministic choice)";
  }
  if (offload.policy != OffloadPolicy::none || scenario.memory.offload != OffloadPolicy::none) {
    result.note += "; offload " + to_string(scenario.memory.offload) +
                   " (applied: " + to_string(offload.policy) +
                   (offload.memory_optimal_algorithms ? ", no workspace" : "") + "), " +
                   format_bytes(result.offloaded_bytes) + " to host and back per step";
  }
  if (!replica_batches.empty()) {
    std::string shares;
    for (const auto batch : replica_batches) {
      shares += (shares.empty() ? "" : ", ") + std::to_string(batch);
    }
    result.note += "; samples per rank " + shares +
                   " (data_split: " + to_string(scenario.parallelism.data_split) +
                   ", shares from the scenario's cluster)";
  }
  if (profiler) {
    result.note +=
        "; between the measured steps, for as long as each took, " +
        std::to_string(profiler->row_count()) +
        " profile rows of rank 0's kernels, updates and gradient sums timed again in turn (each " +
        std::to_string(profiler->fewest_visits()) + " times or more" +
        (profiler->allreduce_count() > 0
             ? "), and the all-reduces of its " + std::to_string(profiler->allreduce_count()) +
                   " gradient bucket size(s), one a slot (the steps' times exclude them)"
             : "; the steps' times exclude them)");
  }
  if (loaded.scenario.model.dtype != DType::float32) {
    result.note += "; computed in float32 (model.dtype " + to_string(loaded.scenario.model.dtype) +
                   " is simulated only)";
  }
  return result;
}

}  // namespace

PointResult run_real_point(const LoadedScenario& loaded, const SweepPoint& point,
                           Communicator& world, const ProfileDatabase* profiles,
                           MeasuredTimeline* timeline, InterleavedProfile* interleaved) {
  auto result = point_skeleton(loaded, point);
  const auto& config = point.config;
  if (config.gpus() > world.size()) {
    result.status = PointStatus::skipped;
    result.note = "needs " + std::to_string(config.gpus()) +
                  " ranks (one per device), this run has " + std::to_string(world.size()) +
                  ": launch with mpirun -np " + std::to_string(config.gpus());
    return result;
  }
  const bool participant = world.rank() < config.gpus();
  auto ranks = world.split(participant ? 0 : 1, world.rank());
  // Ranks the point does not use wait for it without taking a core from those it does use.
  if (participant) {
    result = train_point(loaded, point, *ranks, profiles, std::move(result), timeline, interleaved);
  }
  world.barrier_idle();
  return result;
}

}  // namespace tessera::kernels::real
