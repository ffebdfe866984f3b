#include "tessera/kernels/profile/interleaved_profiler.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <optional>

#include "kernel_launch.hpp"
#include "tessera/kernels/communicator.hpp"
#include "tessera/kernels/device.hpp"

namespace tessera::kernels {

struct InterleavedProfiler::Row {
  ProfileEntry entry;
  std::optional<std::size_t> kernel;  // index into kernels_, else
  std::optional<std::size_t> update;  // index into updates_
  ConvolutionAlgorithm algorithm;
  std::vector<double> seconds;  // one per visit
  bool runs = true;             // false once it failed (out of memory beside the trainer, ...)
};

namespace {

// What one visit runs: the row's operands on the device and the call that issues it once.
struct Visit {
  std::unique_ptr<KernelLaunch> kernel;
  std::unique_ptr<UpdateLaunch> update;
  std::function<void()> call;
};

}  // namespace

InterleavedProfiler::InterleavedProfiler(Device& device, Communicator& ranks,
                                         std::vector<KernelToProfile> kernels,
                                         std::vector<UpdateToProfile> updates,
                                         const ProfileDatabase& earlier,
                                         const ProfilerOptions& options)
    : device_(device), ranks_(ranks), kernels_(std::move(kernels)), updates_(std::move(updates)) {
  const std::string name = device_.info().name;
  for (std::size_t k = 0; k < kernels_.size(); ++k) {
    const KernelToProfile& kernel = kernels_[k];
    const auto entries =
        earlier.entries_for(name, kernel.op, kernel.direction, kernel.shape, kernel.dtype);
    for (std::int64_t micro_batch : kernel.micro_batches) {
      std::vector<ConvolutionAlgorithm> algorithms;
      try {
        algorithms = algorithms_for(device_, kernel, micro_batch, kernel.direction);
      } catch (const std::exception&) {
        continue;  // the library cannot describe the shape: the earlier row says so already
      }
      for (const ProfileEntry& entry : entries) {
        if (entry.micro_batch != micro_batch || !entry.ok ||
            skips_algorithm(options, entry.algorithm)) {
          continue;
        }
        const auto algorithm =
            std::find_if(algorithms.begin(), algorithms.end(),
                         [&](const ConvolutionAlgorithm& a) { return a.name == entry.algorithm; });
        if (algorithm == algorithms.end()) continue;  // "fused", or another library's name
        rows_.push_back({.entry = entry, .kernel = k, .algorithm = *algorithm});
      }
    }
  }
  for (std::size_t u = 0; u < updates_.size(); ++u) {
    const UpdateToProfile& update = updates_[u];
    for (const ProfileEntry& entry :
         earlier.entries_for(name, update.op, Direction::forward, update.shape, update.dtype)) {
      if (entry.ok) rows_.push_back({.entry = entry, .update = u});
    }
  }
  flush_ = cache_flush_buffer(device_, options);
}

InterleavedProfiler::~InterleavedProfiler() = default;

double InterleavedProfiler::time_row(Row& row) {
  Visit visit;
  if (row.kernel) {
    visit.kernel =
        std::make_unique<KernelLaunch>(device_, kernels_[*row.kernel], row.entry.micro_batch);
    auto call = visit.kernel->call(row.entry.direction, row.algorithm);
    if (!call) throw std::logic_error("no call");  // the constructor kept only rows that run
    visit.call = std::move(*call);
  } else {
    visit.update = std::make_unique<UpdateLaunch>(device_, updates_[*row.update]);
    visit.call = [&update = *visit.update] { update.call(); };
  }
  const auto flush = [&] { flush_caches(device_, flush_.get()); };
  // As the profiler times a run: the first call of a kernel creates it, so it is not counted.
  flush();
  device_.time_seconds(visit.call);
  flush();
  const double seconds = device_.time_seconds(visit.call);
  // A rank done first keeps running its row while the others finish theirs.
  ranks_.barrier_busy([&] {
    visit.call();
    device_.synchronize();
  });
  return seconds;
}

void InterleavedProfiler::measure_for(double seconds) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    Row* row = nullptr;
    for (std::size_t tried = 0; tried < rows_.size() && row == nullptr; ++tried) {
      Row& candidate = rows_[next_];
      next_ = (next_ + 1) % rows_.size();
      if (candidate.runs) row = &candidate;
    }
    if (row != nullptr) {
      try {
        row->seconds.push_back(time_row(*row));
      } catch (const std::exception&) {
        // Out of memory beside the trainer's tensors, say: the earlier row stands.
        // The same kind of barrier as the other ranks' (a non-blocking barrier matches no
        // blocking one).
        row->runs = false;
        ranks_.barrier_busy([] {});
      }
    } else {
      ranks_.barrier_busy([] {});
    }
    double over =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= seconds
            ? 1.0
            : 0.0;
    ranks_.allreduce_max(&over, 1);
    if (over > 0) return;
  }
}

ProfileDatabase InterleavedProfiler::medians() const {
  ProfileDatabase database;
  for (const Row& row : rows_) {
    if (row.seconds.empty()) continue;
    std::vector<double> sorted = row.seconds;
    std::sort(sorted.begin(), sorted.end());
    ProfileEntry entry = row.entry;
    entry.time_seconds = sorted[(sorted.size() - 1) / 2];
    entry.where = {};
    database.add(entry);
  }
  return database;
}

std::size_t InterleavedProfiler::row_count() const {
  return rows_.size();
}

std::size_t InterleavedProfiler::fewest_visits() const {
  std::size_t fewest = rows_.empty() ? 0 : rows_.front().seconds.size();
  for (const Row& row : rows_) fewest = std::min(fewest, row.seconds.size());
  return fewest;
}

}  // namespace tessera::kernels
