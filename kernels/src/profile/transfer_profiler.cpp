#include <cstring>
#include <limits>
#include <vector>

#include "tessera/kernels/communicator.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/profile/kernel_profiler.hpp"

namespace tessera::kernels {

ProfileEntry transfer_row(const std::string& device, const std::string& op, double bytes, int ranks,
                          double seconds) {
  return {.device = device,
          .op = op,
          .shape = transfer_shape(bytes, ranks),
          .micro_batch = 1,
          .algorithm = "default",
          .time_seconds = seconds};
}

void profile_copies(Device& device, const std::vector<double>& sizes_bytes,
                    const ProfilerOptions& options, ProfileDatabase& database) {
  const std::string name = device.info().name;
  for (double bytes : sizes_bytes) {
    const auto floats = static_cast<std::size_t>(bytes) / sizeof(float);
    auto on_device = device.allocate(floats * sizeof(float));
    auto other = device.allocate(floats * sizeof(float));
    auto pinned = device.allocate_pinned_host(floats * sizeof(float));
    std::vector<float> pageable(floats, 1.0f);
    std::memset(pinned->data(), 0, floats * sizeof(float));
    const auto time = [&](const std::function<void()>& copy) {
      return median_seconds(device, copy, options);
    };
    database.add(transfer_row(name, "copy_h2d_pinned", bytes, 1, time([&] {
                                device.copy_to_device(pinned->data(), on_device->data(), floats);
                              })));
    database.add(transfer_row(name, "copy_d2h_pinned", bytes, 1, time([&] {
                                device.copy_to_host(on_device->data(), pinned->data(), floats);
                              })));
    database.add(transfer_row(name, "copy_h2d_pageable", bytes, 1, time([&] {
                                device.copy_to_device(pageable.data(), on_device->data(), floats);
                              })));
    database.add(transfer_row(name, "copy_d2h_pageable", bytes, 1, time([&] {
                                device.copy_to_host(on_device->data(), pageable.data(), floats);
                              })));
    database.add(transfer_row(name, "copy_d2d", bytes, 1, time([&] {
                                device.copy_on_device(on_device->data(), other->data(), floats);
                              })));
  }
}

void profile_collectives(Communicator& ranks, Device& device,
                         const std::vector<double>& sizes_bytes, const ProfilerOptions& options,
                         ProfileDatabase& database) {
  if (ranks.size() < 2) return;
  const std::string name = device.info().name;
  for (double bytes : sizes_bytes) {
    // Rank 0 holds the rows: it says whether an earlier run measured this size already, and every
    // rank then skips it or times it alike.
    double wanted = 0;
    if (ranks.rank() == 0) {
      for (const char* op : {"allreduce", "sendrecv"}) {
        if (database
                .entries_for(name, op, Direction::forward, transfer_shape(bytes, ranks.size()),
                             DType::float32)
                .empty()) {
          wanted = 1;
        }
      }
    }
    ranks.allreduce_max(&wanted, 1);
    if (wanted == 0) continue;
    const auto floats = static_cast<std::size_t>(bytes) / sizeof(float);
    auto data = device.allocate(floats * sizeof(float));
    auto received = device.allocate(floats * sizeof(float));
    device.fill(data->data(), floats, 1.0f);
    // Every rank runs the same number of repetitions: no time-based early stop, or ranks would
    // disagree and deadlock.
    ProfilerOptions fixed = options;
    fixed.min_runs = fixed.max_runs = options.min_runs;
    fixed.seconds_per_measurement = std::numeric_limits<double>::infinity();
    // Messages are timed warm, the ranks in step (each run ends in a barrier): a cache flush
    // before every run takes each rank its own time, and a timed run then held one rank waiting
    // for another's flush (a 4 kB send/receive measured at 37 to 563 us on one machine).
    fixed.caches = RunCaches::warm;
    ranks.barrier();
    const double allreduce = median_seconds(
        device,
        [&] {
          ranks.allreduce_sum(data->data(), floats);
          ranks.barrier();
        },
        fixed);
    // Each rank sends to its right neighbour and receives from its left one, as a halo does.
    const int right = (ranks.rank() + 1) % ranks.size();
    const int left = (ranks.rank() + ranks.size() - 1) % ranks.size();
    const double sendrecv = median_seconds(
        device,
        [&] {
          std::vector<std::unique_ptr<CommRequest>> requests;
          requests.push_back(ranks.receive(received->data(), floats, left, 7));
          requests.push_back(ranks.send(data->data(), floats, right, 7));
          wait_all(requests);
          ranks.barrier();
        },
        fixed);
    if (ranks.rank() == 0) {
      database.add(transfer_row(name, "allreduce", bytes, ranks.size(), allreduce));
      database.add(transfer_row(name, "sendrecv", bytes, ranks.size(), sendrecv));
    }
  }
}

}  // namespace tessera::kernels
