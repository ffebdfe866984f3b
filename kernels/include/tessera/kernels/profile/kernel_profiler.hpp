#pragma once
// Measures, on one device, the kernels a scenario's GPUs run (core's profile plan): every
// direction, every algorithm the library offers for convolutions, every micro-batch size of the
// policy; plus host<->device and on-device copies, and collectives where several ranks exist.
// Rows go into the profile database the simulator's cost model reads.
#include <cstdint>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/point/profile_plan.hpp"

namespace tessera::kernels {

class Communicator;
class Device;

struct ProfilerOptions {
  int warmup_runs = 1;
  int min_runs = 3;
  int max_runs = 11;
  // Repeat a measurement until this much time went into it (or max_runs); the median counts.
  double seconds_per_measurement = 0.2;
  // Algorithms whose workspace exceeds this are recorded as not run (ok = false).
  double max_workspace_bytes = 4.0 * 1024 * 1024 * 1024;
  // Algorithms whose name starts with one of these are not measured and get no row (e.g. "ref:",
  // oneDNN's reference implementations, 100x slower than the others and never a library's pick).
  std::vector<std::string> skipped_algorithm_prefixes;
  // What each timed run finds in the caches (RunCaches, profile_database.hpp): warm runs go back
  // to back; flushed and step_like runs follow a write of cache_flush_bytes of device memory,
  // and a step_like run also a run of the same kernel on a second set of operands. Timed warm,
  // kernels ran several times faster than in training (docs/measurements/2026-11-21.md); flushed
  // on a CPU, their small kernels slower, the flush having evicted the libraries' code too
  // (docs/measurements/2026-12-04-cpu-step-like-caches.md). set_cold_caches picks per device.
  RunCaches caches = RunCaches::warm;
  double cache_flush_bytes = 0;
};

// Whether options.skipped_algorithm_prefixes leaves the algorithm of this name out.
bool skips_algorithm(const ProfilerOptions& options, const std::string& algorithm);

// Twice the device's last-level cache (the CPU's L3, the GPU's L2), or 256 MiB when unknown.
double cache_flush_bytes_for(const Device& device);

// Whether a measurement runs the kernel on a second set of operands before each timed run.
bool runs_shadow(RunCaches caches);

// Runs on `device` timed as in a training step: step_like on a CPU, whose last-level cache holds
// the libraries' code and tables beside the data; flushed on a GPU, whose kernels' code does not
// compete with the data in its L2. The flush buffer twice the last-level cache.
void set_cold_caches(ProfilerOptions& options, const Device& device);

// Median of repeated runs of `work` after warm-up, timed the device's way, the caches before
// each as options.caches says; `shadow` is the step_like run on the second set of operands
// (none: a step_like run is only flushed).
double median_seconds(Device& device, const std::function<void()>& work,
                      const ProfilerOptions& options, const std::function<void()>& shadow = {});

// Called before each kernel: index, total, and what is being measured.
using ProfileProgress =
    std::function<void(std::size_t index, std::size_t total, const KernelToProfile& kernel)>;

// The algorithm named in the one row of a shape the library refuses whatever the algorithm.
inline constexpr const char* kRefusedAlgorithm = "refused";

// One row per (kernel, micro-batch size, algorithm); an algorithm that fails or does not fit is
// a row with ok = false, so the planner knows it was tried, and a shape the library cannot
// describe at all (a tensor outside cuDNN's int range) one such row named kRefusedAlgorithm.
// `measured`: rows an earlier run took; an algorithm at a size it holds a row of is not measured
// again.
void profile_kernels(Device& device, const std::vector<KernelToProfile>& kernels,
                     const ProfilerOptions& options, ProfileDatabase& database,
                     const ProfileProgress& progress = {},
                     const ProfileDatabase* measured = nullptr);

// The sizes of `sizes` (micro-batches of the kernel) that `database` has no row for on
// `device_name`, any algorithm.
std::vector<std::int64_t> missing_micro_batches(const ProfileDatabase& database,
                                                const std::string& device_name,
                                                const KernelToProfile& kernel,
                                                const std::vector<std::int64_t>& sizes);
// What a resumed or extended run still has to measure: the sizes without a row, and those of a
// convolution where the device now offers an algorithm (not skipped by `options`) that
// `database` has no row of (a newer library's, or one an earlier --skip-algorithms left out).
std::vector<std::int64_t> sizes_to_measure(Device& device, const ProfileDatabase& database,
                                           const KernelToProfile& kernel,
                                           const std::vector<std::int64_t>& sizes,
                                           const ProfilerOptions& options);
// The (micro-batch, algorithm) pairs `database` holds rows of for the kernel on `device_name`.
using MeasuredRows = std::set<std::pair<std::int64_t, std::string>>;
MeasuredRows measured_rows(const ProfileDatabase& database, const std::string& device_name,
                           const KernelToProfile& kernel);

// Each streaming kernel over parameters (the optimizer update, weights, gradients and moments in
// device memory as the real backend holds them; or a gradient sum), one row each (op update_adam,
// gradient_sum etc., micro-batch 1).
void profile_parameter_kernels(Device& device, const std::vector<ParameterKernelToProfile>& kernels,
                               const ProfilerOptions& options, ProfileDatabase& database);

// Copy bandwidth against size: host->device and device->host from pinned and pageable host
// memory, and device->device. Rows have op "copy_h2d_pinned" etc. and shape "bytes N".
void profile_copies(Device& device, const std::vector<double>& sizes_bytes,
                    const ProfilerOptions& options, ProfileDatabase& database);

// All-reduce and neighbour send/receive against size over `ranks` (op "allreduce" /
// "sendrecv", shape "bytes N ranks R"), with warm caches whatever options.caches says. Every rank
// must call it; rows are added on rank 0. A size rank 0's `database` holds both rows of already
// (an earlier run's) is not timed again.
void profile_collectives(Communicator& ranks, Device& device,
                         const std::vector<double>& sizes_bytes, const ProfilerOptions& options,
                         ProfileDatabase& database);

// The shape key of a transfer row.
std::string transfer_shape(double bytes, int ranks = 1);
// A transfer's row: op "allreduce", "copy_d2d", ... of `bytes` among `ranks` in `seconds`.
ProfileEntry transfer_row(const std::string& device, const std::string& op, double bytes, int ranks,
                          double seconds);

// The message sizes `tessera profile` times copies and collectives at: 4 kB to 256 MB.
const std::vector<double>& transfer_sizes_bytes();

}  // namespace tessera::kernels
