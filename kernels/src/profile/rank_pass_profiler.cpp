#include "tessera/kernels/profile/rank_pass_profiler.hpp"

#include <chrono>
#include <exception>
#include <memory>

#include "tessera/core/cost/rank_passes.hpp"
#include "tessera/kernels/communicator.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/profile/kernel_replay.hpp"

namespace tessera::kernels {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

void profile_rank_passes(Communicator& ranks, Device& device,
                         const std::vector<KernelToProfile>& kernels,
                         const ProfileDatabase& profiles, double seconds, int min_passes,
                         ProfileDatabase& database) {
  std::vector<std::unique_ptr<KernelReplay>> replays;
  for (const auto& kernel : kernels) {
    try {
      if (auto replay = KernelReplay::of(device, kernel, profiles)) {
        replays.push_back(std::move(replay));
      }
    } catch (const std::exception&) {
      // Out of memory beside the others' operands, say: the pass goes without it.
    }
  }
  const auto pass = [&] {
    for (auto& replay : replays) replay->run_once();
  };
  pass();  // a kernel's first call creates it (the profiler does not count it either)
  std::vector<double> own;
  const auto start = Clock::now();
  for (;;) {
    // Each pass starts together on every rank; one done first waits polling, as a rank waiting
    // for the others' gradients does.
    ranks.barrier_busy([] {});
    const auto pass_start = Clock::now();
    pass();
    own.push_back(replays.empty() ? 0.0 : seconds_since(pass_start));
    double over =
        seconds_since(start) >= seconds && static_cast<int>(own.size()) >= min_passes ? 1.0 : 0.0;
    ranks.allreduce_max(&over, 1);
    if (over > 0) break;
  }
  const auto passes = own.size();
  const auto count = static_cast<std::size_t>(ranks.size());
  std::vector<double> all(passes * count, 0.0);
  for (std::size_t p = 0; p < passes; ++p)
    all[p * count + static_cast<std::size_t>(ranks.rank())] = own[p];
  ranks.allreduce_sum(all.data(), all.size());
  if (ranks.rank() != 0) return;
  const std::string name = device.info().name;
  for (std::size_t p = 0; p < passes; ++p) {
    for (std::size_t r = 0; r < count; ++r) {
      const double time = all[p * count + r];
      if (time <= 0) continue;
      database.add(rank_pass_row(name, static_cast<int>(count), static_cast<int>(r),
                                 static_cast<int>(p), time));
    }
  }
}

}  // namespace tessera::kernels
