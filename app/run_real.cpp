#include "run_real.hpp"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <set>
#include <stdexcept>

#include "command_guard.hpp"
#include "output_directory.hpp"
#include "scenario_target.hpp"
#include "sweep_outcome.hpp"
#include "tessera/core/common/atomic_file.hpp"
#include "tessera/core/common/input_error.hpp"
#include "tessera/core/common/quantity.hpp"
#include "tessera/core/common/text_table.hpp"
#include "tessera/core/common/utc_time.hpp"
#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/model/training_task.hpp"
#include "tessera/core/result/sweep_runner.hpp"
#include "tessera/core/result/timeline.hpp"
#include "tessera/core/time_to_train/time_to_train.hpp"
#include "tessera/kernels/communicator.hpp"
#include "tessera/kernels/device_inventory.hpp"
#include "tessera/kernels/real/real_point.hpp"
#include "trace_files.hpp"
#include "version_text.hpp"

namespace tessera::app {
namespace {

// Rank 0 tells the others which point comes next (index + 1; 0 when the sweep is done): the
// sweep runner on rank 0 decides, skipping points kept from an earlier run.
std::int64_t next_point(kernels::Communicator& world, std::int64_t announced) {
  double value = world.rank() == 0 ? static_cast<double>(announced + 1) : 0.0;
  world.allreduce_sum(&value, 1);
  return static_cast<std::int64_t>(value) - 1;
}

void show_point(std::size_t done, std::size_t total, const SweepPoint& point,
                const PointResult* result, bool resumed) {
  if (result == nullptr) {
    std::cerr << "point " << point.index << " (" << point.config.gpus() << " ranks): training...\n";
    return;
  }
  std::cerr << "[" << done << "/" << total << "] point " << point.index << ": "
            << (resumed ? "kept from the previous run" : to_string(result->status));
  if (result->status == PointStatus::ok)
    std::cerr << ", step " << format_seconds(result->step_seconds);
  std::cerr << "\n";
}

std::string summary(const std::vector<PointResult>& points, bool with_target) {
  std::vector<std::string> columns{"point", "ranks", "grid", "global batch", "status", "step"};
  if (with_target) columns.push_back("time to train");
  for (const char* column : {"samples/s", "compute", "halo", "allreduce", "other comm", "I/O",
                             "offload", "idle", "memory/rank"}) {
    columns.push_back(column);
  }
  TextTable table(columns);
  for (const auto& p : points) {
    const auto& b = p.breakdown;
    char rate[32];
    std::snprintf(rate, sizeof rate, "%.2f", p.samples_per_second);
    std::vector<std::string> row{std::to_string(p.point), std::to_string(p.gpus),
                                 p.spatial_grid,          std::to_string(p.global_batch),
                                 to_string(p.status),     format_seconds(p.step_seconds)};
    if (with_target) row.push_back(format_time_to_train(p.time_to_train_seconds));
    for (auto cell :
         {std::string(rate), format_seconds(b.compute_seconds), format_seconds(b.halo_seconds),
          format_seconds(b.allreduce_seconds), format_seconds(b.other_communication_seconds),
          format_seconds(b.io_seconds), format_seconds(b.offload_seconds),
          format_seconds(b.idle_seconds), format_bytes(p.peak_memory_bytes)}) {
      row.push_back(std::move(cell));
    }
    table.add_row(std::move(row));
  }
  std::string text = table.render();
  for (const auto& p : points) text += "point " + std::to_string(p.point) + ": " + p.note + "\n";
  return text;
}

// What a measurement depends on besides the scenario: this machine's devices and the compute
// threads that OMP_NUM_THREADS may impose. A kept point measured elsewhere or with other threads
// would be a stale number.
nlohmann::json this_machine() {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& device : kernels::discover_devices().devices) {
    devices.push_back({device.kind, device.name, device.compute_units, device.memory_bytes});
  }
  const char* threads = std::getenv("OMP_NUM_THREADS");
  return {{"devices", devices}, {"omp_num_threads", threads ? threads : ""}};
}

}  // namespace

int run_real_backend(const RealRunSettings& settings) {
  auto world = kernels::mpi_world();
  auto loaded = settings.file == "default" ? load_default_scenario({settings.cluster})
                                           : load_scenario(settings.file, {settings.cluster});
  if (settings.warmup_steps >= 0) loaded.scenario.real.warmup_steps = settings.warmup_steps;
  if (settings.measured_steps >= 0) loaded.scenario.real.measured_steps = settings.measured_steps;
  const auto& io = loaded.scenario.io;
  if (io.format == DatasetFormat::hdf5 && io.dataset.empty()) {
    const auto where = loaded.scenario.where.count("io.format")
                           ? loaded.scenario.where.at("io.format")
                           : loaded.scenario.where.at("io");
    throw InputError(where, "io.dataset",
                     "the real backend reads format hdf5 from a directory of sample files: give "
                     "io.dataset (tessera data generate makes one), or use format: synthetic");
  }
  // Every rank checks it alike before anything collective: a model with nothing to train
  // towards is the scenario's mistake, not a run's failure.
  try {
    target_layout(loaded.model);
  } catch (const std::invalid_argument& error) {
    const auto& where = loaded.scenario.where;
    throw InputError(
        where.count("model") ? where.at("model") : SourceLocation{loaded.scenario.file, 0, 0},
        "model", std::string(error.what()) + "; the real backend trains towards one loss");
  }
  check_point_indices(loaded, settings.points);
  check_trace_point(loaded, settings.trace_point, settings.points);
  ProfileDatabase profiles;
  for (const auto& path : settings.profiles) profiles.load_csv(path);
  const ProfileDatabase* measured = profiles.size() > 0 ? &profiles : nullptr;
  if (!settings.interleaved_profile.empty() && measured == nullptr) {
    throw InputError({}, "--interleaved-profile",
                     "expected --profiles too: the rows it times again between the steps are "
                     "theirs");
  }
  if ((settings.interleaved_warm_caches || settings.interleaved_rank_passes) &&
      settings.interleaved_profile.empty()) {
    throw InputError({},
                     settings.interleaved_rank_passes ? "--interleaved-rank-passes"
                                                      : "--interleaved-warm-caches",
                     "expected --interleaved-profile too: it changes how that profile is timed");
  }
  // Every point's re-timed rows, written after each point (rank 0).
  ProfileDatabase interleaved_rows;
  RunCaches interleaved_caches = RunCaches::unrecorded;
  const auto write_interleaved = [&] {
    if (settings.interleaved_profile.empty() || interleaved_rows.size() == 0) return;
    const auto& first = profiles.sources().front();
    write_file_atomically(settings.interleaved_profile,
                          interleaved_rows.to_csv({.device = first.device,
                                                   .libraries = first.libraries,
                                                   .created_utc = utc_now(),
                                                   .micro_batch_timing = first.micro_batch_timing,
                                                   .caches = interleaved_caches}));
  };
  const TraceFiles traces{settings.trace_file, traced_point(settings.trace_point, settings.points,
                                                            loaded.points.size())};
  // Where the results and timelines go, checked before any training on rank 0, which alone
  // writes them; its verdict is shared so that every rank stops with it.
  std::optional<InputError> unwritable;
  if (world->rank() == 0) {
    try {
      prepare_run_outputs(settings.output, traces, loaded, settings.points);
    } catch (const InputError& error) {
      unwritable = error;
    }
  }
  double stop = unwritable ? 1.0 : 0.0;
  world->allreduce_max(&stop, 1);
  if (unwritable) throw *unwritable;
  if (stop > 0) return kExitBadInput;
  // Every rank passes a timeline for a traced point (the gather is collective), rank 0 writes.
  kernels::real::MeasuredTimeline timeline;
  std::set<std::size_t> traced;  // the points whose timeline this run wrote
  auto run_point = [&](std::size_t index) {
    kernels::real::InterleavedProfile interleaved{.warm_caches = settings.interleaved_warm_caches,
                                                  .rank_passes = settings.interleaved_rank_passes};
    auto result = kernels::real::run_real_point(
        loaded, loaded.points.at(index), *world, measured,
        traces.traces(index) ? &timeline : nullptr,
        settings.interleaved_profile.empty() ? nullptr : &interleaved);
    for (const auto& row : interleaved.rows.rows()) interleaved_rows.add(row);
    if (interleaved.caches != RunCaches::unrecorded) interleaved_caches = interleaved.caches;
    write_interleaved();
    return result;
  };
  if (world->rank() != 0) {
    for (auto index = next_point(*world, 0); index >= 0; index = next_point(*world, 0)) {
      run_point(static_cast<std::size_t>(index));
    }
    return kExitOk;
  }
  SweepRunOptions options;
  options.backend = "real";
  options.output_directory = settings.output;
  options.resume = !settings.fresh;
  options.only_points = settings.points;
  options.tessera_version = build_identity();
  options.profiles = measured;
  options.machine = this_machine();
  options.profile_files = settings.profiles;
  options.settings = {{"ranks", world->size()},
                      {"warmup_steps", loaded.scenario.real.warmup_steps},
                      {"measured_steps", loaded.scenario.real.measured_steps},
                      {"deterministic", loaded.scenario.real.deterministic},
                      {"gradient_bucket_bytes", loaded.scenario.sim.gradient_bucket_bytes},
                      {"optimizer", to_string(loaded.scenario.model.optimizer)},
                      {"profiles", settings.profiles},
                      {"interleaved_profile", !settings.interleaved_profile.empty()}};
  SweepRunResult result;
  try {
    result = run_sweep(
        loaded, options,
        [&](const SweepPoint& point) {
          next_point(*world, static_cast<std::int64_t>(point.index));
          auto point_result = run_point(point.index);
          if (traces.traces(point.index) && !timeline.events.empty()) {
            traced.insert(point.index);
            write_file_atomically(traces.path(point.index),
                                  chrome_trace(timeline.events, loaded.scenario.name, point.index,
                                               "real", timeline.memory)
                                          .dump() +
                                      "\n");
          }
          return point_result;
        },
        show_point);
  } catch (const kernels::real::EveryRankInputError&) {
    throw;  // every rank stops with it: none waits for the next point
  } catch (...) {
    next_point(*world, -1);  // release the other ranks before reporting
    throw;
  }
  next_point(*world, -1);
  std::cout << summary(result.points, loaded.statistical_efficiency.target != TrainingTarget::none)
            << "results: " << result.csv_path << ", " << result.json_path;
  if (const auto resumed = resume_summary(result); !resumed.empty()) {
    std::cout << " (" << resumed << ")";
  }
  std::cout << trace_report(traces, traced, "measured",
                            "no traced point ran here (a point kept from an earlier run is not "
                            "trained again; --fresh trains it)")
            << "\n";
  return sweep_exit_code(result.points);
}

}  // namespace tessera::app
