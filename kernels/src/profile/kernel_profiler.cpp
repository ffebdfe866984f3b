#include "tessera/kernels/profile/kernel_profiler.hpp"

#include <algorithm>
#include <exception>
#include <optional>
#include <set>
#include <stdexcept>

#include "kernel_launch.hpp"
#include "tessera/core/common/lower_median.hpp"
#include "tessera/kernels/device.hpp"

namespace tessera::kernels {

namespace {

double median_seconds(Device& device, const std::function<void()>& work,
                      const ProfilerOptions& options, const CachePreparation& caches,
                      const std::function<void()>& shadow) {
  // The warm-up is timed too: a kernel slower than the whole measurement budget is run once more
  // and that run counts, so slow algorithms (oneDNN's reference one) cost one or two runs, not
  // eleven.
  const auto run = [&] {
    caches.before_run(shadow);
    return device.time_seconds(work);
  };
  double warmup_seconds = 0;
  for (int i = 0; i < options.warmup_runs; ++i) warmup_seconds += run();
  // Ten budgets or more: kernel creation is negligible against the run, take the warm-up itself.
  if (warmup_seconds >= 10 * options.seconds_per_measurement) return warmup_seconds;
  if (warmup_seconds >= options.seconds_per_measurement) return run();
  std::vector<double> times;
  double spent = 0;
  while (static_cast<int>(times.size()) < options.max_runs &&
         (static_cast<int>(times.size()) < options.min_runs ||
          spent < options.seconds_per_measurement)) {
    times.push_back(run());
    spent += times.back();
  }
  return lower_median(std::move(times));
}

// Whether `measured` holds a row at micro-batch `size`, any algorithm (the set is ordered by size
// first).
bool has_any_row(const MeasuredRows& measured, std::int64_t size) {
  const auto first = measured.lower_bound({size, std::string()});
  return first != measured.end() && first->first == size;
}

}  // namespace

double median_seconds(Device& device, const std::function<void()>& work,
                      const ProfilerOptions& options, const std::function<void()>& shadow) {
  const CachePreparation caches(device, options);
  return median_seconds(device, work, options, caches, shadow);
}

bool runs_shadow(RunCaches caches) {
  return caches == RunCaches::step_like;
}

void set_cold_caches(ProfilerOptions& options, const Device& device) {
  options.caches = device.info().kind == "cpu" ? RunCaches::step_like : RunCaches::flushed;
  options.cache_flush_bytes = cache_flush_bytes_for(device);
}

bool skips_algorithm(const ProfilerOptions& options, const std::string& algorithm) {
  return std::any_of(options.skipped_algorithm_prefixes.begin(),
                     options.skipped_algorithm_prefixes.end(),
                     [&](const std::string& prefix) { return algorithm.starts_with(prefix); });
}

double cache_flush_bytes_for(const Device& device) {
  const double cache = device.info().cache_bytes;
  return cache > 0 ? 2 * cache : 256.0 * 1024 * 1024;
}

void profile_kernels(Device& device, const std::vector<KernelToProfile>& kernels,
                     const ProfilerOptions& options, ProfileDatabase& database,
                     const ProfileProgress& progress, const ProfileDatabase* measured) {
  const std::string device_name = device.info().name;
  const CachePreparation caches(device, options);
  for (std::size_t index = 0; index < kernels.size(); ++index) {
    const KernelToProfile& kernel = kernels[index];
    if (progress) progress(index, kernels.size(), kernel);
    const MeasuredRows earlier =
        measured != nullptr ? measured_rows(*measured, device_name, kernel) : MeasuredRows{};
    for (std::int64_t micro_batch : kernel.micro_batches) {
      ProfileEntry row{.device = device_name,
                       .op = kernel.op,
                       .direction = kernel.direction,
                       .shape = kernel.shape,
                       .dtype = kernel.dtype,
                       .micro_batch = micro_batch};
      std::vector<ConvolutionAlgorithm> algorithms;
      try {
        algorithms = algorithms_for(device, kernel, micro_batch, kernel.direction);
      } catch (const std::invalid_argument&) {
        // The library cannot describe the shape at all (cuDNN's int strides and a tensor of 2^31
        // elements or more): a result, like an algorithm that refuses it, so that the rest of
        // the plan is still measured and a resumed profile does not try it again.
        row.algorithm = kRefusedAlgorithm;
        row.ok = false;
        database.add(row);
        continue;
      }
      for (const ConvolutionAlgorithm& algorithm : algorithms) {
        if (skips_algorithm(options, algorithm.name) ||
            earlier.contains({micro_batch, algorithm.name})) {
          continue;
        }
        row.algorithm = algorithm.name;
        row.workspace_bytes = algorithm.workspace_bytes;
        row.time_seconds = 0;
        row.ok = algorithm.workspace_bytes <= options.max_workspace_bytes;
        if (row.ok) {
          // Out of memory or an implementation that refuses the shape is a result: not run.
          try {
            KernelLaunch launch(device, kernel, micro_batch);
            if (auto call = launch.call(kernel.direction, algorithm)) {
              std::optional<KernelLaunch> second;  // the step_like run's operands
              std::function<void()> shadow;
              if (runs_shadow(options.caches)) {
                second.emplace(device, kernel, micro_batch);
                shadow = *second->call(kernel.direction, algorithm);
              }
              row.time_seconds = median_seconds(device, *call, options, caches, shadow);
            } else {
              row.algorithm = "fused";  // done inside another direction's call
            }
          } catch (const std::exception&) {
            row.ok = false;
          }
        }
        database.add(row);
      }
    }
  }
}

std::string transfer_shape(double bytes, int ranks) {
  std::string shape = "bytes " + std::to_string(static_cast<std::int64_t>(bytes));
  return ranks > 1 ? shape + " ranks " + std::to_string(ranks) : shape;
}

const std::vector<double>& transfer_sizes_bytes() {
  static const std::vector<double> sizes{4e3, 64e3, 1e6, 16e6, 256e6};
  return sizes;
}

std::vector<std::int64_t> missing_micro_batches(const ProfileDatabase& database,
                                                const std::string& device_name,
                                                const KernelToProfile& kernel,
                                                const std::vector<std::int64_t>& sizes) {
  const MeasuredRows measured = measured_rows(database, device_name, kernel);
  std::vector<std::int64_t> missing;
  for (std::int64_t size : sizes) {
    if (!has_any_row(measured, size)) missing.push_back(size);
  }
  return missing;
}

MeasuredRows measured_rows(const ProfileDatabase& database, const std::string& device_name,
                           const KernelToProfile& kernel) {
  MeasuredRows rows;
  for (const ProfileEntry& row :
       database.entries_for(device_name, kernel.op, kernel.direction, kernel.shape, kernel.dtype)) {
    rows.emplace(row.micro_batch, row.algorithm);
  }
  return rows;
}

std::vector<std::int64_t> sizes_to_measure(Device& device, const ProfileDatabase& database,
                                           const KernelToProfile& kernel,
                                           const std::vector<std::int64_t>& sizes,
                                           const ProfilerOptions& options) {
  const MeasuredRows measured = measured_rows(database, device.info().name, kernel);
  const auto has = [&](std::int64_t size, const std::string& algorithm) {
    return measured.contains({size, algorithm});
  };
  std::vector<std::int64_t> result;
  for (std::int64_t size : sizes) {
    if (!has_any_row(measured, size)) {
      result.push_back(size);
      continue;
    }
    // Only convolutions have several algorithms; a shape the library refuses whatever the
    // algorithm stays refused.
    if (!is_convolution(kernel.layer.kind) || has(size, kRefusedAlgorithm)) continue;
    std::vector<ConvolutionAlgorithm> offered;
    try {
      offered = algorithms_for(device, kernel, size, kernel.direction);
    } catch (const std::invalid_argument&) {
      continue;
    }
    const bool lacks_one =
        std::any_of(offered.begin(), offered.end(), [&](const ConvolutionAlgorithm& algorithm) {
          return !skips_algorithm(options, algorithm.name) && !has(size, algorithm.name);
        });
    if (lacks_one) result.push_back(size);
  }
  return result;
}

}  // namespace tessera::kernels
