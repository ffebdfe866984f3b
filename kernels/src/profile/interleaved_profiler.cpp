#include "tessera/kernels/profile/interleaved_profiler.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <functional>
#include <numeric>
#include <optional>
#include <set>

#include "kernel_launch.hpp"
#include "tessera/core/common/lower_median.hpp"
#include "tessera/core/cost/rank_passes.hpp"
#include "tessera/kernels/communicator.hpp"
#include "tessera/kernels/device.hpp"

namespace tessera::kernels {

struct InterleavedProfiler::Row {
  ProfileEntry entry;
  std::optional<std::size_t> kernel;            // index into kernels_, else
  std::optional<std::size_t> parameter_kernel;  // index into parameter_kernels_
  ConvolutionAlgorithm algorithm;
  std::vector<double> seconds;  // one per visit
  bool runs = true;             // false once it failed (out of memory beside the trainer, ...)
};

// One all-reduce size: its buffer (zeros, which stay zeros summed) and the times of its visits.
struct InterleavedProfiler::Allreduce {
  double bytes = 0;
  std::unique_ptr<DeviceMemory> data;
  std::vector<double> seconds;
};

// What one visit runs: the row's operands on the device and the call that issues it once.
struct InterleavedProfiler::Visit {
  std::unique_ptr<KernelLaunch> kernel;
  std::unique_ptr<ParameterKernelLaunch> parameter_kernel;
  std::function<void()> call;
  std::function<void()> producer;  // ParameterKernelLaunch::producer
};

InterleavedProfiler::InterleavedProfiler(Device& device, Communicator& ranks,
                                         std::vector<KernelToProfile> kernels,
                                         std::vector<ParameterKernelToProfile> parameter_kernels,
                                         const ProfileDatabase& earlier,
                                         const ProfilerOptions& options, RowPairing pairing,
                                         const std::vector<double>& allreduce_bytes)
    : device_(device),
      ranks_(ranks),
      kernels_(std::move(kernels)),
      parameter_kernels_(std::move(parameter_kernels)),
      pairing_(pairing) {
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
  for (std::size_t u = 0; u < parameter_kernels_.size(); ++u) {
    const ParameterKernelToProfile& kernel = parameter_kernels_[u];
    for (const ProfileEntry& entry :
         earlier.entries_for(name, kernel.op, Direction::forward, kernel.shape, kernel.dtype)) {
      if (entry.ok) rows_.push_back({.entry = entry, .parameter_kernel = u});
    }
  }
  order_.resize(rows_.size());
  std::iota(order_.begin(), order_.end(), std::size_t{0});
  // Each rank its own draws, the same in every run.
  draws_.seed(static_cast<std::mt19937::result_type>(ranks_.rank()) + 1);
  caches_ = std::make_unique<CachePreparation>(device_, options);
  if (pairing_ == RowPairing::same_row && ranks_.size() > 1) {
    const std::set<double> sizes(allreduce_bytes.begin(), allreduce_bytes.end());
    for (const double bytes : sizes) {
      const auto floats = static_cast<std::size_t>(bytes / sizeof(float));
      if (floats == 0) continue;
      Allreduce allreduce{.bytes = bytes, .data = device_.allocate(floats * sizeof(float))};
      device_.fill(allreduce.data->data(), floats, 0.0f);
      allreduces_.push_back(std::move(allreduce));
    }
  }
}

InterleavedProfiler::~InterleavedProfiler() = default;

void InterleavedProfiler::time_next_allreduce() {
  Allreduce& allreduce = allreduces_[next_allreduce_];
  next_allreduce_ = (next_allreduce_ + 1) % allreduces_.size();
  // The ranks start together and each run ends in a barrier, as tessera profile times them.
  ranks_.barrier();
  allreduce.seconds.push_back(device_.time_seconds([&] {
    ranks_.allreduce_sum(allreduce.data->data(), allreduce.data->floats());
    ranks_.barrier();
  }));
}

std::unique_ptr<InterleavedProfiler::Visit> InterleavedProfiler::open_visit(const Row& row) {
  auto visit = std::make_unique<Visit>();
  if (row.kernel) {
    visit->kernel =
        std::make_unique<KernelLaunch>(device_, kernels_[*row.kernel], row.entry.micro_batch);
    auto call = visit->kernel->call(row.entry.direction, row.algorithm);
    if (!call) throw std::logic_error("no call");  // the constructor kept only rows that run
    visit->call = std::move(*call);
  } else {
    visit->parameter_kernel =
        std::make_unique<ParameterKernelLaunch>(device_, parameter_kernels_[*row.parameter_kernel]);
    visit->call = [&launch = *visit->parameter_kernel] { launch.call(); };
    visit->producer = visit->parameter_kernel->producer();
  }
  return visit;
}

std::optional<double> InterleavedProfiler::time_row(Row& row) {
  std::unique_ptr<Visit> visit;
  std::unique_ptr<Visit> second;  // the step-like run's operands
  try {
    visit = open_visit(row);
    if (runs_shadow(caches_->caches())) second = open_visit(row);
    const std::function<void()> shadow =
        then_producer(second ? second->call : std::function<void()>{}, visit->producer);
    // As the profiler times a run: the first call of a kernel creates it, so it is not counted.
    caches_->before_run(shadow);
    device_.time_seconds(visit->call);
    caches_->before_run(shadow);
  } catch (const std::exception&) {
    // Out of memory beside the trainer's tensors, say: the earlier row stands. The rank still
    // meets the others below (a non-blocking barrier matches no blocking one).
    row.runs = false;
    visit.reset();
  }
  if (pairing_ == RowPairing::drawn) {
    start_with_the_others(visit ? &row : nullptr);
  }
  std::optional<double> seconds;
  if (visit) seconds = device_.time_seconds(visit->call);
  if (pairing_ == RowPairing::drawn) {
    // A stage done first waits for the other's message: the longer row's kernel runs on beside
    // a rank that only polls, for the part of it the shorter row left, as the slower stage's
    // kernels meet the faster one's only for the share of the step the faster one computes. (The
    // same non-blocking barrier as every other path here: a blocking one matches none of them.)
    ranks_.barrier_busy([] {});
    return seconds;
  }
  // A rank done first keeps running its row while the others finish theirs (the same layer on
  // every rank, as in the step).
  ranks_.barrier_busy([&] {
    if (!visit) return;
    visit->call();
    device_.synchronize();
  });
  return seconds;
}

void InterleavedProfiler::start_with_the_others(const Row* row) {
  // Every rank has prepared its caches (no row is timed beside another rank's cache preparation,
  // a streaming write no step does). A row shorter than the longest of the others' starts at a
  // moment drawn within it, as a stage's kernel meets the other stages' at any moment of theirs;
  // until then the rank waits, polling as a stage waiting for a message does, so that the
  // longest row has a busy neighbour only while the shorter one runs.
  const double own = row != nullptr ? row->entry.time_seconds : 0.0;
  double longest = own;
  ranks_.allreduce_max(&longest, 1);
  if (row == nullptr || longest <= own) return;
  const double lead = std::uniform_real_distribution<double>(0.0, longest - own)(draws_);
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < lead) {
  }
}

InterleavedProfiler::Row* InterleavedProfiler::next_row() {
  for (std::size_t tried = 0; tried < order_.size(); ++tried) {
    if (next_ == 0 && pairing_ == RowPairing::drawn) {
      std::shuffle(order_.begin(), order_.end(), draws_);
    }
    Row& candidate = rows_[order_[next_]];
    next_ = (next_ + 1) % order_.size();
    if (candidate.runs) return &candidate;
  }
  return nullptr;
}

void InterleavedProfiler::time_rank_passes() {
  rank_passes_ = ranks_.size() > 1;
}

std::vector<std::size_t> InterleavedProfiler::pass_rows() const {
  // Per kernel, its fastest row at the whole batch; per update or gradient sum, its row.
  std::vector<std::optional<std::size_t>> kernel_row(kernels_.size());
  std::vector<std::optional<std::size_t>> parameter_row(parameter_kernels_.size());
  const auto faster = [&](const std::optional<std::size_t>& best, std::size_t r) {
    return !best || rows_[r].entry.time_seconds < rows_[*best].entry.time_seconds;
  };
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    const Row& row = rows_[r];
    if (!row.runs) continue;
    if (row.kernel) {
      if (row.entry.micro_batch != kernels_[*row.kernel].batch) continue;
      if (faster(kernel_row[*row.kernel], r)) kernel_row[*row.kernel] = r;
    } else if (faster(parameter_row[*row.parameter_kernel], r)) {
      parameter_row[*row.parameter_kernel] = r;
    }
  }
  std::vector<std::size_t> pass;
  for (const auto& rows : {kernel_row, parameter_row}) {
    for (const auto& r : rows) {
      if (r) pass.push_back(*r);
    }
  }
  return pass;
}

void InterleavedProfiler::time_pass() {
  auto& slot = slots_.emplace_back(Slot{.pass = true});
  const auto pass = pass_rows();
  // Every rank meets the others once per row of the rank with the most, as measure_for does.
  double most = static_cast<double>(pass.size());
  ranks_.allreduce_max(&most, 1);
  for (std::size_t i = 0; i < static_cast<std::size_t>(most); ++i) {
    if (i < pass.size()) {
      Row& row = rows_[pass[i]];
      if (const auto timed = time_row(row)) {
        row.seconds.push_back(*timed);
        slot.rows.emplace_back(pass[i], *timed);
      }
    } else {
      if (pairing_ == RowPairing::drawn) start_with_the_others(nullptr);
      ranks_.barrier_busy([] {});
    }
  }
}

void InterleavedProfiler::measure_for(double seconds) {
  if (rank_passes_ && slots_.size() % 2 == 0) {  // the first pause too: a short run has one
    time_pass();
    if (!allreduces_.empty()) time_next_allreduce();
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  auto& slot = slots_.emplace_back();
  for (;;) {
    if (Row* row = next_row()) {
      if (const auto timed = time_row(*row)) {
        row->seconds.push_back(*timed);
        slot.rows.emplace_back(static_cast<std::size_t>(row - rows_.data()), *timed);
      }
    } else {
      // Nothing of its own to time: it meets the others as time_row does.
      if (pairing_ == RowPairing::drawn) start_with_the_others(nullptr);
      ranks_.barrier_busy([] {});
    }
    double over =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >= seconds
            ? 1.0
            : 0.0;
    ranks_.allreduce_max(&over, 1);
    if (over > 0) break;
  }
  if (!allreduces_.empty()) time_next_allreduce();
}

ProfileDatabase InterleavedProfiler::medians() const {
  ProfileDatabase database;
  for (const Row& row : rows_) {
    if (row.seconds.empty()) continue;
    ProfileEntry entry = row.entry;
    entry.time_seconds = lower_median(row.seconds);
    entry.where = {};
    database.add(entry);
  }
  for (const Allreduce& allreduce : allreduces_) {
    if (allreduce.seconds.empty()) continue;
    database.add(transfer_row(device_.info().name, "allreduce", allreduce.bytes, ranks_.size(),
                              lower_median(allreduce.seconds)));
  }
  return database;
}

ProfileDatabase InterleavedProfiler::rank_passes() const {
  ProfileDatabase database;
  if (!rank_passes_) return database;
  std::vector<double> median(rows_.size(), 0.0);
  for (std::size_t r = 0; r < rows_.size(); ++r) {
    if (!rows_[r].seconds.empty()) median[r] = lower_median(rows_[r].seconds);
  }
  double pass = 0;  // the pass at its rows' medians
  for (const std::size_t r : pass_rows()) pass += median[r];
  for (std::size_t s = 0; s < slots_.size(); ++s) {
    if (!slots_[s].pass) continue;
    double taken = 0, usual = 0;
    for (const auto& [row, seconds] : slots_[s].rows) {
      taken += seconds;
      usual += median[row];
    }
    if (usual <= 0) continue;
    database.add(rank_pass_row(device_.info().name, ranks_.size(), ranks_.rank(),
                               static_cast<int>(s), pass * taken / usual));
  }
  return database;
}

RunCaches InterleavedProfiler::caches() const {
  return caches_->caches();
}

std::size_t InterleavedProfiler::allreduce_count() const {
  return allreduces_.size();
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
