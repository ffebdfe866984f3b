// tessera data: the HDF5 data sets the real backend trains on, in CosmoFlow's layout (regression)
// or the 3D U-Net's (segmentation). `generate` writes a synthetic one whose targets are learnable
// from the volume; `inspect` checks a directory and,
// with --read, reads a rank's sub-volume of every sample through the prefetcher and reports the
// I/O bandwidth and stall time (--compute-ms stands in for the step the reads hide behind).
#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <span>
#include <sstream>
#include <thread>

#include "command_guard.hpp"
#include "commands.hpp"
#include "option_checks.hpp"
#include "tessera/core/common/quantity.hpp"
#include "tessera/kernels/io/dataset_index.hpp"
#include "tessera/kernels/io/sample_prefetcher.hpp"
#include "tessera/kernels/io/synthetic_dataset.hpp"
#include "tessera/kernels/real/synthetic_dataset_files.hpp"

namespace tessera::app {
namespace {

namespace io = kernels::io;
using Clock = std::chrono::steady_clock;

std::string format_bandwidth(double bytes_per_second) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(2) << bytes_per_second / 1e9 << " GB/s";
  return text.str();
}

std::string format_targets(std::span<const float> targets) {
  std::ostringstream text;
  text << std::fixed << std::setprecision(3);
  for (std::size_t k = 0; k < targets.size(); ++k) text << (k ? ", " : "") << targets[k];
  return text.str();
}

void add_generate_command(CLI::App& data, Action& action) {
  auto* command = data.add_subcommand(
      "generate",
      "Write a synthetic data set (one HDF5 file per sample) in CosmoFlow's layout (--task "
      "regression) or the 3D U-Net's (--task segmentation)");
  auto spec = std::make_shared<io::SyntheticDatasetSpec>();
  auto task = std::make_shared<TargetLayout>(
      TargetLayout{.task = TrainingTask::regression, .values_per_sample = io::kTargetCount});
  command->add_option("--output", spec->directory, "Directory to write (created if needed)")
      ->required();
  command->add_option("--samples", spec->samples, "Number of samples")
      ->required()
      ->check(whole_number_in(1, 10'000'000));
  command->add_option("--width", spec->width, "Volume width: each sample is C x W x W x W")
      ->required()
      ->check(whole_number_in(io::kMinimumSyntheticWidth, std::int64_t{1} << 14));
  command->add_option("--channels", spec->channels, "Channels per voxel")
      ->default_val(4)
      ->check(whole_number_in(1, 1024));
  command->add_option("--seed", spec->seed, "Seed; the same seed writes the same files")
      ->default_val(0)
      ->check(whole_number_in(0, std::numeric_limits<std::int64_t>::max()));
  command
      ->add_option(
          "--chunk-depth", spec->layout.chunk_depth,
          "Store the volume (`full`, or `volume` for --task segmentation) in chunks of this "
          "many whole depth planes (default: contiguous)")
      ->default_val(0)
      ->check(whole_number_in(0, std::int64_t{1} << 14));
  command
      ->add_option("--stored-dtype", spec->layout.dtype,
                   "Values of the volume in the files: float32, or int16 rounded to integers "
                   "(as MLPerf HPC's CosmoFlow counts; a scenario reading them says "
                   "io.stored_dtype: int16)")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, StoredDType>{{"float32", StoredDType::float32},
                                             {"int16", StoredDType::int16}},
          CLI::ignore_case))
      ->default_str("float32");
  command
      ->add_option("--task", task->task,
                   "regression: CosmoFlow's four targets; segmentation: each voxel's class")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, TrainingTask>{{"regression", TrainingTask::regression},
                                              {"segmentation", TrainingTask::segmentation}},
          CLI::ignore_case))
      ->default_str("regression");
  command
      ->add_option("--classes", task->classes,
                   "Classes of the voxels (segmentation; the model's output channels)")
      ->default_val(3)
      ->check(whole_number_in(2, 1 << 16));
  command->callback([&action, spec, task] {
    action = [spec, task] {
      return run_guarded([&] {
        const io::VolumeShape shape{.channels = spec->channels,
                                    .spatial = {spec->width, spec->width, spec->width}};
        // A chunk holds at most the whole depth (the writer's HDF5 chunk is cut to it).
        spec->layout.chunk_depth = std::min(spec->layout.chunk_depth, spec->width);
        const double bytes = static_cast<double>(shape.floats()) *
                             static_cast<double>(stored_dtype_bytes(spec->layout.dtype));
        std::cout << "writing " << counted(spec->samples, "sample") << " of " << io::describe(shape)
                  << " " << to_string(spec->layout.dtype) << " (" << format_bytes(bytes)
                  << " each, "
                  << (task->task == TrainingTask::segmentation
                          ? std::to_string(task->classes) + "-class voxel labels"
                          : std::string("four targets"))
                  << ") to " << spec->directory << ", the volume "
                  << (spec->layout.chunk_depth > 0
                          ? "in chunks of " + std::to_string(spec->layout.chunk_depth) +
                                " depth planes"
                          : std::string("contiguous"))
                  << "\n";
        const auto start = Clock::now();
        kernels::real::write_synthetic_dataset(
            *spec, *task, [&](std::int64_t written, const std::string& path) {
              if (written == spec->samples || written % 16 == 0 || spec->samples <= 16) {
                std::cout << "  " << written << "/" << spec->samples << "  " << path << "\n";
              }
            });
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        std::cout << "wrote " << format_bytes(bytes * static_cast<double>(spec->samples)) << " in "
                  << format_seconds(seconds) << "; the targets follow from the volume (see "
                  << "kernels/real/include/tessera/kernels/real/synthetic_input.hpp)\n"
                  << "reads will use " << io::hdf5_read_mode_description() << "\n";
        return kExitOk;
      });
    };
  });
}

struct InspectSettings {
  std::string directory;
  bool read = false;
  std::int64_t parts = 1;
  std::int64_t part = 0;
  std::int64_t halo = 0;
  double compute_ms = 0;
};

// Reads depth slab `part` of `parts` (with `halo` planes each side) of every sample through the
// prefetcher, as one rank of a depth-split group does, and reports what it cost.
void read_dataset(const io::DatasetIndex& index, const InspectSettings& settings) {
  const auto box = io::slab(index.shape, 0, settings.part, settings.parts);
  const io::SpatialHalo halo{Halo{.lower = settings.halo, .upper = settings.halo}, Halo{}, Halo{}};
  io::SamplePrefetcher prefetcher(index.paths(), box, halo);
  const auto start = Clock::now();
  while (const auto* sample = prefetcher.next()) {
    if (sample->position == 0 && settings.parts == 1 &&
        index.layout == io::SampleLayout::cosmoflow) {
      std::cout << "  " << sample->path << ": unitPar " << format_targets(sample->targets)
                << "; estimated from the volume "
                << format_targets(io::estimate_targets(index.shape, sample->volume)) << "\n";
    }
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(settings.compute_ms));
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const auto statistics = prefetcher.statistics();
  std::cout << "read depth slab " << settings.part << " of " << settings.parts << " ("
            << io::describe(io::with_halo(box, halo, index.shape)) << ") of "
            << counted(statistics.samples, "sample") << ": " << format_bytes(statistics.bytes)
            << " in " << format_seconds(statistics.read_seconds) << " of reading ("
            << format_bandwidth(statistics.read_bytes_per_second()) << "), caller stalled "
            << format_seconds(statistics.stall_seconds) << " of " << format_seconds(seconds)
            << (settings.compute_ms > 0 ? " with " + format_seconds(settings.compute_ms / 1e3) +
                                              " of stand-in compute per sample"
                                        : std::string())
            << "\n";
}

void add_inspect_command(CLI::App& data, Action& action) {
  auto* command = data.add_subcommand(
      "inspect", "Check a data set directory (layout, shapes) and optionally time reading it");
  auto settings = std::make_shared<InspectSettings>();
  command->add_option("directory", settings->directory, "Data set directory")
      ->check(kNonEmptyText)
      ->required();
  command->add_flag("--read", settings->read,
                    "Read every sample's depth slab through the prefetcher and report bandwidth");
  command->add_option("--parts", settings->parts, "Depth slabs per sample (ranks of a split)")
      ->default_val(1)
      ->check(whole_number_in(1, std::int64_t{1} << 14));
  command->add_option("--part", settings->part, "Which slab to read, 0-based")
      ->default_val(0)
      ->check(whole_number_in(0, std::int64_t{1} << 14));
  command->add_option("--halo", settings->halo, "Halo planes on each side of the slab")
      ->default_val(0)
      ->check(whole_number_in(0, std::int64_t{1} << 14));
  command
      ->add_option("--compute-ms", settings->compute_ms,
                   "Wait this long per sample, standing in for a training step, to see how much "
                   "of the reading the prefetch hides")
      ->default_val(0)
      ->check(number_in(0.0, 1e6));
  command->callback([&action, settings] {
    action = [settings] {
      return run_guarded([&] {
        const auto index = io::index_dataset(settings->directory);
        const auto& first = index.samples.front();
        std::cout << settings->directory << ": "
                  << counted(static_cast<std::int64_t>(index.samples.size()), "sample") << " of "
                  << io::describe(index.shape) << " " << to_string(index.volume_dtype) << " in the "
                  << to_string(index.layout) << " layout, "
                  << format_bytes(index.volume_bytes_per_sample()) << " of volume each; `"
                  << io::volume_dataset_name(index.layout) << "` "
                  << (first.chunk_depth > 0
                          ? "in chunks of " + std::to_string(first.chunk_depth) + " depth planes"
                          : std::string("contiguous"))
                  << " in " << first.path << "\n"
                  << "reads use " << io::hdf5_read_mode_description() << "\n";
        if (!settings->read) return kExitOk;
        if (settings->parts > index.shape.spatial[0] || settings->part >= settings->parts) {
          std::cerr << "error: --part " << settings->part << " of --parts " << settings->parts
                    << " does not fit a depth of " << index.shape.spatial[0] << "\n";
          return kExitBadInput;
        }
        // Training's halo exchange reaches only the neighbouring slab, so a halo is at most the
        // thinnest slab (the scenario check halo_wider_than_slab says the same).
        const std::int64_t thinnest_slab = index.shape.spatial[0] / settings->parts;
        if (settings->halo > thinnest_slab) {
          std::cerr << "error: --halo " << settings->halo << " is wider than the thinnest of "
                    << settings->parts << " depth slabs (" << thinnest_slab
                    << " planes); expected at most " << thinnest_slab << "\n";
          return kExitBadInput;
        }
        read_dataset(index, *settings);
        return kExitOk;
      });
    };
  });
}

}  // namespace

void add_data_command(CLI::App& cli, Action& action) {
  auto* data = cli.add_subcommand(
      "data",
      "Generate or inspect an HDF5 data set in CosmoFlow's or the 3D U-Net's layout for the real "
      "backend");
  data->require_subcommand(1);
  add_generate_command(*data, action);
  add_inspect_command(*data, action);
}

}  // namespace tessera::app
