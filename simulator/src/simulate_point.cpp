#include "tessera/simulator/simulate_point.hpp"

#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>

#include <simgrid/s4u/Engine.hpp>

#include "child_simulation.hpp"
#include "play/staging.hpp"
#include "play/step_player.hpp"
#include "play/symmetric_reduction.hpp"
#include "process/child_process.hpp"
#include "step_plays.hpp"
#include "tessera/core/common/quantity.hpp"
#include "tessera/core/point/point_input.hpp"
#include "tessera/core/point/point_programs.hpp"
#include "tessera/core/point/rank_programs.hpp"
#include "tessera/core/result/point_identity.hpp"
#include "tessera/core/result/timeline.hpp"
#include "tessera/core/strategy/memory_estimate.hpp"
#include "tessera/core/strategy/rank_numbering.hpp"
#include "tessera/simulator/platform/platform.hpp"

namespace tessera::sim {
namespace {

Provenance compute_provenance(const std::vector<StepProgram>& programs) {
  bool profile = false, roofline = false;
  for (const auto& program : programs) {
    for (const auto& op : program.ops) {
      profile |= op.provenance == Provenance::profile;
      roofline |= op.provenance == Provenance::roofline;
    }
  }
  if (profile && roofline) return Provenance::mixed;
  return profile ? Provenance::profile : roofline ? Provenance::roofline : Provenance::none;
}

// What the split gave each GPU type: per node group the fewest and most samples of its GPUs,
// stragglers left out (the note names them after).
std::string proportional_split_note(const ClusterSpec& cluster,
                                    const std::vector<std::int64_t>& batches, std::int64_t gpus) {
  std::string note;
  const std::size_t groups = std::max<std::size_t>(cluster.groups.size(), 1);
  for (std::size_t g = 0; g < groups; ++g) {
    std::int64_t fewest = std::numeric_limits<std::int64_t>::max(), most = 0;
    for (std::int64_t rank = 0; rank < gpus; ++rank) {
      if (cluster.group_index_of_rank(rank) != g || cluster.gpu_clock_fraction(rank) != 1) continue;
      fewest = std::min(fewest, batches.at(static_cast<std::size_t>(rank)));
      most = std::max(most, batches.at(static_cast<std::size_t>(rank)));
    }
    if (most == 0) continue;
    note += std::string(note.empty() ? " " : ", ") +
            (cluster.groups.size() > 1 ? cluster.groups[g].name + " " : "") +
            std::to_string(fewest) + (most > fewest ? " to " + std::to_string(most) : "") +
            " samples per GPU";
  }
  return note;
}

std::vector<char*> engine_arguments(std::vector<std::string>& storage) {
  storage = {"tessera", "--log=root.thres:critical", "--log=xbt_cfg.thres:critical"};
  std::vector<char*> argv;
  for (auto& text : storage) argv.push_back(text.data());
  argv.push_back(nullptr);
  return argv;
}

// What to play: every GPU, or a symmetric reduction where the platform is known to be
// homogeneous (built from a cluster file) and flows are aggregated.
// `source`: where this epoch's steps read their samples (the point's input plan).
SymmetricReduction plan_reduction(const LoadedScenario& loaded, const ParallelConfig& config,
                                  const SimulationOptions& options,
                                  const std::vector<std::int64_t>& batches, InputSource source) {
  if (loaded.scenario.sim.mode == "full") {
    return full_simulation(loaded.cluster, config, "sim.mode: full");
  }
  if (!loaded.simgrid_xml_path.empty()) {
    return full_simulation(loaded.cluster, config, "a SimGrid platform file may be heterogeneous");
  }
  if (options.granularity == Granularity::message) {
    return full_simulation(loaded.cluster, config, "message granularity");
  }
  if (!loaded.cluster.jitter.empty()) {
    return full_simulation(loaded.cluster, config, "rank jitter: each GPU its own slowdown");
  }
  // The tree's node trees span the whole cluster: the played nodes' trees cross an oversubscribed
  // core differently (measured on 32 nodes at 4:1: its time 26% off, the step 15%), so only the
  // ring and hierarchical algorithms are reduced there.
  const bool tree_possible = loaded.scenario.sim.allreduce == CollectiveAlgorithm::tree ||
                             loaded.scenario.sim.allreduce == CollectiveAlgorithm::automatic;
  if (tree_possible && loaded.cluster.network.oversubscription > 1) {
    return full_simulation(loaded.cluster, config,
                           "a tree all-reduce over an oversubscribed fat tree is not symmetric");
  }
  if (reads_data_store_across_nodes(loaded.cluster, config, source)) {
    return full_simulation(loaded.cluster, config,
                           "the data store's holders are drawn at random: each node reads its own "
                           "way");
  }
  // Failed nodes among the job's leave its nodes unevenly placed in the fabric; beyond them they
  // change nothing, and the reduced cluster leaves them out.
  if (!loaded.cluster.failed_nodes.empty()) {
    const std::int64_t job_nodes =
        (config.gpus() + loaded.cluster.gpus_per_node - 1) / loaded.cluster.gpus_per_node;
    if (loaded.cluster.failed_nodes.front() < loaded.cluster.node_of_job_node(job_nodes - 1)) {
      return full_simulation(loaded.cluster, config,
                             "failed nodes among the job's leave them unevenly placed");
    }
    ClusterSpec healthy = loaded.cluster;
    healthy.failed_nodes.clear();
    return plan_symmetric_reduction(healthy, config, options.min_played_nodes, batches);
  }
  return plan_symmetric_reduction(loaded.cluster, config, options.min_played_nodes, batches);
}

}  // namespace

std::string network_model_description(const Scenario& scenario) {
  return "SimGrid " + scenario.sim.network_model + " network model" +
         (scenario.sim.network_model == "CM02" ? " (alpha-beta, no cross-traffic)" : "");
}

SimulationOutcome simulate_point(const LoadedScenario& loaded, const SweepPoint& point,
                                 const SimulationOptions& options) {
  const auto wall_start = std::chrono::steady_clock::now();
  const auto& s = loaded.scenario;
  const auto& config = point.config;

  // The step program every GPU of a stage plays, timed by the cost model, under the offload
  // policy that fits (memory_plan.hpp).
  const auto recipe = point_recipe(loaded, point, options.epoch);
  const auto input = plan_input(loaded, config.gpus());
  // Each GPU type's programs at a mini-batch, and each GPU's samples (both backends' shares).
  const auto build = program_builder(loaded, point.plan, options.profiles, recipe);
  const auto batches = point_batches_of_ranks(loaded, point, options.profiles);

  std::vector<std::string> storage;
  auto argv = engine_arguments(storage);
  int argc = static_cast<int>(argv.size()) - 1;
  simgrid::s4u::Engine engine(&argc, argv.data());
  engine.set_config("network/model:" + s.sim.network_model);
  if (s.sim.network_model == "CM02") engine.set_config("network/crosstraffic:0");
  engine.set_config("contexts/guard-size:0");  // lifts the ~32 K actor limit
  // Each actor's stack (8 MiB) is calloc'd. Once one is freed, glibc raises its mmap threshold
  // above that size and later stacks come from the heap, which calloc must zero page by page:
  // the message-level collectives' short-lived workers then kept every stack they ever had
  // resident. A fixed threshold keeps stacks mapped lazily, each page resident once touched.
  ::mallopt(M_MMAP_THRESHOLD, 1 << 20);

  const auto reduction = plan_reduction(loaded, config, options, batches, input.of(options.epoch));
  const auto played_gpus = reduction.played.gpus();
  const auto platform =
      loaded.simgrid_xml_path.empty()
          ? build_cluster_platform(engine, reduction.cluster, played_gpus)
          : load_xml_platform(engine, loaded.simgrid_xml_path, s.platform.simgrid_gpu_hosts,
                              played_gpus, static_cast<int>(s.platform.simgrid_gpus_per_node));
  std::vector<simgrid::s4u::Host*> gpu_hosts(platform.gpu_hosts.begin(),
                                             platform.gpu_hosts.begin() + played_gpus);
  const Fabric fabric(std::move(gpu_hosts));
  const RankNumbering layout(reduction.played);
  PlaySettings settings;
  settings.replicas = reduction.replicas;
  settings.store_draw = options.store_draw;
  settings.copied_bytes_per_read_byte = static_cast<double>(dtype_bytes(s.model.dtype)) /
                                        static_cast<double>(stored_dtype_bytes(s.io.stored_dtype));
  std::optional<MeasuredAllreduce> measured_allreduce;
  if (options.profiles != nullptr) {
    measured_allreduce.emplace(*options.profiles, loaded.cluster.gpu.model);
    if (!measured_allreduce->empty()) settings.measured_allreduce = &*measured_allreduce;
  }
  settings.automatic_allreduce = s.sim.allreduce == CollectiveAlgorithm::automatic;
  settings.allreduce = s.sim.allreduce == CollectiveAlgorithm::tree ? AllreduceAlgorithm::tree
                       : s.sim.allreduce == CollectiveAlgorithm::hierarchical
                           ? AllreduceAlgorithm::hierarchical
                           : AllreduceAlgorithm::ring;
  settings.granularity = options.granularity;
  if (options.trace) {
    // A GPU that is not played is shown by the played one standing for it.
    for (auto gpu : s.outputs.trace_gpus) {
      if (gpu < config.gpus()) settings.traced_gpus.insert(static_cast<int>(gpu % played_gpus));
    }
  }
  // A played rank's batch: its own in full, else its group's (uniform within groups when reduced).
  std::vector<std::int64_t> batch_of_played_rank;
  if (s.parallelism.data_split != DataSplit::equal) {
    for (std::int64_t rank = 0; rank < played_gpus; ++rank) {
      const auto first_node =
          loaded.cluster.first_node_of_group(reduction.cluster.group_index_of_rank(rank));
      const auto full_rank =
          reduction.replicas == 1 ? rank : first_node * loaded.cluster.gpus_per_node;
      batch_of_played_rank.push_back(batches.at(static_cast<std::size_t>(full_rank)));
    }
  }
  const auto rank_programs = plan_rank_programs(reduction.cluster, played_gpus, config.mini_batch,
                                                batch_of_played_rank, build);
  const auto& program_sets = rank_programs.sets;
  const auto& programs = program_sets.front();
  settings.program_set_of_rank = rank_programs.set_of_rank;
  settings.compute_stretch_of_rank = rank_programs.stretch_of_rank;
  if (options.jitter_moment && !loaded.cluster.jitter.empty()) {
    auto& stretch = settings.compute_stretch_of_rank;
    stretch.resize(static_cast<std::size_t>(played_gpus), 1.0);
    for (std::int64_t rank = 0; rank < played_gpus; ++rank) {
      stretch[static_cast<std::size_t>(rank)] *=
          loaded.cluster.jitter.slowdown(*options.jitter_moment, rank);
    }
  }
  StepPlayer player(platform, fabric, layout, program_sets, settings);
  player.spawn();
  engine.run();
  player.check_finished();
  // The staging phase, played after the step on the same platform (steady-state run only).
  const bool stages = input.staged && input.staged_bytes_per_node > 0 &&
                      options.epoch == Epoch::later && can_stage(platform);
  const double staging_seconds =
      stages ? play_staging(platform,
                            static_cast<int>((played_gpus + platform.gpus_per_node - 1) /
                                             platform.gpus_per_node),
                            input.staged_bytes_per_node)
             : 0;

  // The step ends when the last GPU finishes; its breakdown is the step's.
  std::size_t critical = 0;
  for (std::size_t r = 0; r < player.times().size(); ++r) {
    if (player.times()[r].end_seconds > player.times()[critical].end_seconds) critical = r;
  }
  const auto& t = player.times()[critical];
  SimulationOutcome outcome;
  auto& r = outcome.result;
  r = point_identity(s.name, static_cast<std::int64_t>(point.index), "sim", config);
  r.step_seconds = t.end_seconds;
  r.samples_per_second =
      t.end_seconds > 0 ? static_cast<double>(r.global_batch) / t.end_seconds : 0;
  r.first_epoch_step_seconds = r.step_seconds;
  r.staging_seconds = staging_seconds;
  r.input_source = to_string(input.of(options.epoch));
  auto& b = r.breakdown;
  b.compute_seconds = t.seconds[static_cast<int>(OpCategory::compute)];
  b.halo_seconds = t.seconds[static_cast<int>(OpCategory::halo)];
  b.allreduce_seconds = t.seconds[static_cast<int>(OpCategory::allreduce)];
  b.other_communication_seconds = t.seconds[static_cast<int>(OpCategory::other_communication)];
  b.io_seconds = t.seconds[static_cast<int>(OpCategory::io)];
  b.offload_seconds = t.seconds[static_cast<int>(OpCategory::offload)];
  b.idle_seconds =
      std::max(0.0, r.step_seconds - b.compute_seconds - b.halo_seconds - b.allreduce_seconds -
                        b.other_communication_seconds - b.io_seconds - b.offload_seconds);
  const auto memory = point_memory(loaded, point, batches);
  r.peak_memory_bytes = memory.total_bytes;
  // The time average of the GPU holding the most (the peak is the memory plan's, which the
  // played timeline reaches too).
  std::size_t fullest = 0;
  for (std::size_t g = 0; g < player.times().size(); ++g) {
    if (player.times()[g].memory.peak_bytes() > player.times()[fullest].memory.peak_bytes()) {
      fullest = g;
    }
  }
  r.average_memory_bytes = player.times()[fullest].memory.average_bytes();
  r.offloaded_bytes = memory.offloaded_bytes;
  r.device_capacity_bytes = memory.capacity_bytes;
  r.fits = memory.fits;
  r.status = memory.fits ? PointStatus::ok : PointStatus::does_not_fit;
  r.time_provenance = Provenance::simulated;
  r.compute_provenance = compute_provenance(programs);
  r.memory_provenance = Provenance::estimated;
  r.layer_compute = layer_compute_times(loaded.model, programs);
  r.note = network_model_description(s) + "; " + reduction.description();
  if (options.trace && reduction.replicas > 1) {
    r.note += "; traced GPU g is shown by played GPU g mod " + std::to_string(played_gpus);
  }
  if (s.parallelism.data_split == DataSplit::proportional) {
    r.note += "; data split proportional to GPU speed:" +
              proportional_split_note(loaded.cluster, batches, config.gpus());
    for (const auto& straggler : loaded.cluster.stragglers) {
      if (straggler.kind != StragglerKind::gpu_clock || straggler.index >= config.gpus()) continue;
      r.note += ", straggler GPU " + std::to_string(straggler.index) + " " +
                std::to_string(batches.at(static_cast<std::size_t>(straggler.index)));
    }
  }
  if (const auto choices = player.automatic_allreduce_choices(); !choices.empty()) {
    r.note += "; all-reduce algorithm (sim.allreduce: auto) by size: " + choices;
  }
  if (settings.measured_allreduce != nullptr) {
    r.note += "; all-reduces within a node timed as the profile measured them (" +
              settings.measured_allreduce->description() + ")";
  }
  r.note += "; " + input.description();
  if (memory.offload.policy != OffloadPolicy::none || s.memory.offload != OffloadPolicy::none) {
    r.note +=
        "; offload " + to_string(s.memory.offload) +
        (s.memory.offload == OffloadPolicy::dyn
             ? " (applied: " + to_string(memory.offload.policy) +
                   (memory.offload.memory_optimal_algorithms ? ", memory-optimal algorithms" : "") +
                   ")"
             : "") +
        ": " + format_bytes(memory.offloaded_bytes) + " to host and back per step";
    if (memory.offloaded_bytes > 0 && !player.host_copies_played()) {
      r.note += " (not simulated: this platform has no host memory to copy to)";
    }
  }
  if (input.staged && input.staged_bytes_per_node > 0 && !stages) {
    r.note +=
        "; this platform cannot stage (no file system or node-local disks): staging not "
        "simulated";
  }
  if (input.of(options.epoch) != InputSource::none && !player.reads_played()) {
    r.note += "; this platform cannot serve " + to_string(input.of(options.epoch)) +
              " reads (no file system, node CPUs or node-local disks): reads not simulated";
  }
  if (!memory.fits) {
    r.note += "; does not fit: needs " + format_bytes(memory.total_bytes) + " per GPU, has " +
              format_bytes(memory.capacity_bytes);
  }
  if (options.trace) {
    outcome.trace =
        chrome_trace(player.events(), s.name, point.index, "sim", player.memory_samples());
  }
  outcome.simulated_actors =
      static_cast<double>(simgrid::s4u::Engine::get_instance()->get_actor_count());
  outcome.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return outcome;
}

namespace {

// A crashed or failing child is a failed row naming why, so that a sweep goes on past it.
SimulationOutcome simulate_in_child(const LoadedScenario& scenario, const SweepPoint& point,
                                    const SimulationOptions& options) {
  const auto child = run_in_child(
      [&] { return simulation_message(simulate_point(scenario, point, options)); }, false);
  return simulation_outcome(child, scenario.scenario.name, point);
}

}  // namespace

SimulationOutcome simulate_point_isolated(const LoadedScenario& scenario, const SweepPoint& point,
                                          const SimulationOptions& options) {
  const auto every_play = [&](const SimulationOptions& epoch_options) {
    const auto what = step_plays(scenario, point, epoch_options);
    std::vector<SimulationOutcome> plays;
    for (const auto& play : what.options) plays.push_back(simulate_in_child(scenario, point, play));
    return median_play(std::move(plays), what);
  };
  auto steady = options;
  steady.epoch = Epoch::later;
  auto outcome = every_play(steady);
  if (outcome.result.status != PointStatus::failed &&
      plan_input(scenario, point.config.gpus()).epochs_differ()) {
    auto first = options;
    first.epoch = Epoch::first;
    first.trace = false;
    add_first_epoch(outcome, every_play(first));
  }
  return outcome;
}

}  // namespace tessera::sim
