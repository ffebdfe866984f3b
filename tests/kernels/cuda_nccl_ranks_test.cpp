// The NCCL communicator across ranks: one thread per GPU of this machine, bootstrapped through an
// in-process stand-in for MPI (a shared sum among the threads). Halo-style ring exchange,
// all-reduce (float and double), all-to-all and split. Skips with fewer than two CUDA devices
// (NCCL needs one GPU per rank).
#include <gtest/gtest.h>

#include <algorithm>
#include <barrier>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "tessera/kernels/communicator.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/device_inventory.hpp"

namespace tessera::kernels {
namespace {

// The threads' common state: a double sum, which is all nccl_over asks of its bootstrap.
struct SharedSum {
  explicit SharedSum(int ranks) : sync(ranks) {}
  std::barrier<> sync;
  std::mutex mutex;
  std::vector<double> total;
};

class ThreadRank final : public Communicator {
 public:
  ThreadRank(int rank, int size, SharedSum& shared) : rank_(rank), size_(size), shared_(shared) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void allreduce_sum(double* data, std::size_t count) override {
    if (rank_ == 0) {
      const std::lock_guard lock(shared_.mutex);
      shared_.total.assign(count, 0.0);
    }
    shared_.sync.arrive_and_wait();
    {
      const std::lock_guard lock(shared_.mutex);
      for (std::size_t i = 0; i < count; ++i) shared_.total[i] += data[i];
    }
    shared_.sync.arrive_and_wait();
    for (std::size_t i = 0; i < count; ++i) data[i] = shared_.total[i];
    shared_.sync.arrive_and_wait();  // nobody resets the total before everyone has read it
  }
  // The rest is not needed to bootstrap NCCL.
  std::unique_ptr<Communicator> split(int, int) override { throw unused(); }
  std::unique_ptr<CommRequest> send(const float*, std::size_t, int, int) override {
    throw unused();
  }
  std::unique_ptr<CommRequest> receive(float*, std::size_t, int, int) override { throw unused(); }
  void allreduce_sum(float*, std::size_t) override { throw unused(); }
  void allreduce_max(double*, std::size_t) override { throw unused(); }
  std::unique_ptr<CommRequest> allreduce_sum_async(float*, std::size_t) override { throw unused(); }
  std::unique_ptr<CommRequest> reduce_scatter_sum_async(float*, std::size_t) override {
    throw unused();
  }
  void allgather(float*, std::size_t) override { throw unused(); }
  void alltoall(const float*, float*, std::size_t) override { throw unused(); }
  void barrier() override { shared_.sync.arrive_and_wait(); }

 private:
  static std::logic_error unused() { return std::logic_error("not part of the bootstrap"); }
  int rank_;
  int size_;
  SharedSum& shared_;
};

int cuda_device_count() {
  int count = 0;
  for (const DeviceInfo& device : discover_devices().devices) count += device.kind == "cuda";
  return count;
}

std::vector<float> to_host(Device& device, DeviceMemory& memory, std::size_t floats) {
  std::vector<float> values(floats);
  device.copy_to_host(memory.data(), values.data(), floats);
  return values;
}

void exercise_rank(int rank, int ranks, SharedSum& shared) {
  auto device = open_cuda_device(rank);  // makes this thread's GPU current
  ThreadRank bootstrap(rank, ranks, shared);
  const auto nccl = nccl_over(bootstrap);
  EXPECT_EQ(nccl->rank(), rank);
  EXPECT_EQ(nccl->size(), ranks);
  constexpr std::size_t floats = 1000;

  // All-reduce: every rank contributes rank + 1.
  auto sum = device->allocate(floats * sizeof(float));
  device->fill(sum->data(), floats, static_cast<float>(rank + 1));
  nccl->allreduce_sum(sum->data(), floats);
  const auto expected_sum = static_cast<float>(ranks * (ranks + 1) / 2);
  EXPECT_EQ(to_host(*device, *sum, floats), std::vector<float>(floats, expected_sum));
  device->fill(sum->data(), floats, 1.0f);
  nccl->allreduce_sum_async(sum->data(), floats)->wait();
  EXPECT_EQ(to_host(*device, *sum, floats), std::vector<float>(floats, static_cast<float>(ranks)));
  std::vector<double> statistics = {static_cast<double>(rank), 0.5};
  nccl->allreduce_sum(statistics.data(), statistics.size());
  EXPECT_EQ(statistics, (std::vector<double>{ranks * (ranks - 1) / 2.0, 0.5 * ranks}));

  // Reduce-scatter then all-gather in place: every rank contributes rank + 1 to each block, so
  // each block sums to the same, and the gather brings every owner's sum back to all.
  constexpr std::size_t block = 250;
  auto sharded = device->allocate(block * ranks * sizeof(float));
  device->fill(sharded->data(), block * ranks, static_cast<float>(rank + 1));
  nccl->reduce_scatter_sum_async(sharded->data(), block)->wait();
  nccl->allgather(sharded->data(), block);
  EXPECT_EQ(to_host(*device, *sharded, block * ranks),
            std::vector<float>(block * ranks, expected_sum));

  // A ring exchange posted as halo exchanges post it: receive and send, then wait for both.
  auto outgoing = device->allocate(floats * sizeof(float));
  auto incoming = device->allocate(floats * sizeof(float));
  device->fill(outgoing->data(), floats, static_cast<float>(rank));
  const int left = (rank + ranks - 1) % ranks;
  const int right = (rank + 1) % ranks;
  std::vector<std::unique_ptr<CommRequest>> requests;
  requests.push_back(nccl->receive(incoming->data(), floats, left, 1));
  requests.push_back(nccl->send(outgoing->data(), floats, right, 1));
  for (auto& request : requests) request->wait();
  EXPECT_EQ(to_host(*device, *incoming, floats),
            std::vector<float>(floats, static_cast<float>(left)));

  // All-to-all: rank r sends r * 100 + p to p.
  constexpr std::size_t per_peer = 7;
  std::vector<float> send(per_peer * ranks);
  for (int peer = 0; peer < ranks; ++peer) {
    std::fill_n(send.begin() + peer * per_peer, per_peer, static_cast<float>(rank * 100 + peer));
  }
  auto send_memory = device->allocate(send.size() * sizeof(float));
  auto receive_memory = device->allocate(send.size() * sizeof(float));
  device->copy_to_device(send.data(), send_memory->data(), send.size());
  nccl->alltoall(send_memory->data(), receive_memory->data(), per_peer);
  const std::vector<float> received = to_host(*device, *receive_memory, send.size());
  for (int peer = 0; peer < ranks; ++peer) {
    EXPECT_EQ(received[peer * per_peer], static_cast<float>(peer * 100 + rank)) << peer;
  }

  // Split by parity: the even and the odd ranks.
  const auto half = nccl->split(rank % 2, rank);
  EXPECT_EQ(half->size(), (ranks + 1 - rank % 2) / 2);
  EXPECT_EQ(half->rank(), rank / 2);
  device->fill(sum->data(), floats, 1.0f);
  half->allreduce_sum(sum->data(), floats);
  EXPECT_EQ(to_host(*device, *sum, 1)[0], static_cast<float>(half->size()));
}

TEST(NcclCommunicatorRanks, OneThreadPerGpu) {
  const int ranks = cuda_device_count();
  if (ranks < 2)
    GTEST_SKIP() << "needs two CUDA devices (NCCL puts one rank per GPU), found " << ranks;
  SharedSum shared(ranks);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < ranks; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        exercise_rank(rank, ranks, shared);
      } catch (const std::exception& error) {
        ADD_FAILURE() << "rank " << rank << ": " << error.what();
      }
    });
  }
  for (auto& thread : threads) thread.join();
}

}  // namespace
}  // namespace tessera::kernels
