// The MPI Communicator, run under mpirun with 2 and 4 ranks: point-to-point, all-reduce (float,
// double, non-blocking), reduce-scatter and all-gather in place, all-to-all, split, the gather
// of text and the busy barrier.
#include <gtest/gtest.h>

#include <chrono>
#include <numeric>
#include <thread>

#include "mpi_world.hpp"

namespace tessera::kernels {
namespace {

using testing::world;

TEST(MpiCommunicator, WorldHasEveryRank) {
  EXPECT_GE(world().size(), 2) << "run under mpirun -np 2 or more";
  EXPECT_GE(world().rank(), 0);
  EXPECT_LT(world().rank(), world().size());
}

TEST(MpiCommunicator, AllreduceSumsFloatsAndDoubles) {
  const int size = world().size(), rank = world().rank();
  std::vector<float> floats = {float(rank + 1), -2.0f * float(rank), 0.5f};
  world().allreduce_sum(floats.data(), floats.size());
  const float ranks_sum = float(size * (size + 1) / 2);
  EXPECT_EQ(floats,
            (std::vector<float>{ranks_sum, -2.0f * (ranks_sum - float(size)), 0.5f * float(size)}));
  // Doubles keep what floats would round away (batch-norm sums of large volumes).
  std::vector<double> doubles = {1e9 + 0.25 * rank, 1.0 / 3.0};
  world().allreduce_sum(doubles.data(), doubles.size());
  EXPECT_DOUBLE_EQ(doubles[0], 1e9 * size + 0.25 * (size * (size - 1) / 2));
  EXPECT_DOUBLE_EQ(doubles[1], size / 3.0);
}

TEST(MpiCommunicator, AllreduceMaxKeepsTheLargest) {
  const int size = world().size(), rank = world().rank();
  std::vector<double> values = {double(rank), -double(rank), 1.5};
  world().allreduce_max(values.data(), values.size());
  EXPECT_EQ(values, (std::vector<double>{double(size - 1), 0.0, 1.5}));
}

TEST(MpiCommunicator, AsynchronousAllreduceCompletesOnWait) {
  std::vector<float> values(1000, float(world().rank()));
  auto request = world().allreduce_sum_async(values.data(), values.size());
  request->wait();
  request->wait();  // idempotent
  const int size = world().size();
  EXPECT_EQ(values, std::vector<float>(1000, float(size * (size - 1) / 2)));
}

TEST(MpiCommunicator, ReduceScatterLeavesEachRankTheSumOfItsOwnBlock) {
  const int size = world().size(), rank = world().rank();
  const std::size_t block = 5;
  // Rank r contributes (r + 1) * (10 * b + i) to element i of block b.
  std::vector<float> values(block * size);
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = float(rank + 1) * float(10 * (i / block) + i % block);
  }
  world().reduce_scatter_sum_async(values.data(), block)->wait();
  const float ranks_sum = float(size * (size + 1) / 2);
  for (std::size_t i = 0; i < block; ++i) {
    EXPECT_EQ(values[rank * block + i], ranks_sum * float(10 * rank + int(i))) << i;
  }
}

TEST(MpiCommunicator, AllgatherFillsEveryBlockFromItsOwner) {
  const int size = world().size(), rank = world().rank();
  const std::size_t block = 4;
  std::vector<float> values(block * size, -1.0f);
  for (std::size_t i = 0; i < block; ++i) values[rank * block + i] = float(100 * rank) + float(i);
  world().allgather(values.data(), block);
  for (int owner = 0; owner < size; ++owner) {
    for (std::size_t i = 0; i < block; ++i) {
      EXPECT_EQ(values[owner * block + i], float(100 * owner) + float(i)) << owner << " " << i;
    }
  }
}

TEST(MpiCommunicator, AlltoallDeliversEachBlockToItsRank) {
  const int size = world().size(), rank = world().rank();
  const std::size_t block = 3;
  std::vector<float> send(block * size), receive(block * size, -1.0f);
  for (int peer = 0; peer < size; ++peer) {
    for (std::size_t i = 0; i < block; ++i)
      send[peer * block + i] = float(100 * rank + 10 * peer) + float(i);
  }
  world().alltoall(send.data(), receive.data(), block);
  for (int peer = 0; peer < size; ++peer) {
    for (std::size_t i = 0; i < block; ++i) {
      EXPECT_EQ(receive[peer * block + i], float(100 * peer + 10 * rank) + float(i));
    }
  }
}

TEST(MpiCommunicator, SplitGroupsByColourAndOrdersByKey) {
  const int size = world().size(), rank = world().rank();
  // Even and odd ranks, each group in reverse rank order.
  auto group = world().split(rank % 2, size - rank);
  const int members = (size - rank % 2 + 1) / 2;
  EXPECT_EQ(group->size(), members);
  EXPECT_EQ(group->rank(), members - 1 - rank / 2);
  float value = float(rank);
  group->allreduce_sum(&value, 1);
  float expected = 0;
  for (int other = rank % 2; other < size; other += 2) expected += float(other);
  EXPECT_EQ(value, expected);
  group->barrier();
}

TEST(MpiCommunicator, RingSendReceiveWithTags) {
  const int size = world().size(), rank = world().rank();
  std::vector<float> to_next(5, float(rank)), to_previous(5, float(-rank));
  std::vector<float> from_previous(5), from_next(5);
  std::vector<std::unique_ptr<CommRequest>> requests;
  requests.push_back(world().receive(from_previous.data(), 5, (rank + size - 1) % size, 1));
  requests.push_back(world().receive(from_next.data(), 5, (rank + 1) % size, 2));
  requests.push_back(world().send(to_next.data(), 5, (rank + 1) % size, 1));
  requests.push_back(world().send(to_previous.data(), 5, (rank + size - 1) % size, 2));
  wait_all(requests);
  EXPECT_EQ(from_previous, std::vector<float>(5, float((rank + size - 1) % size)));
  EXPECT_EQ(from_next, std::vector<float>(5, float(-((rank + 1) % size))));
}

// Texts of different lengths (rank r sends r copies of its letter; rank 0 an empty text) reach
// rank 0 whole and in rank order; the other ranks get nothing.
TEST(MpiCommunicator, GathersEveryRanksTextOnTheFirst) {
  const auto text_of = [](int rank) {
    return std::string(static_cast<std::size_t>(rank), static_cast<char>('a' + rank));
  };
  const int rank = world().rank();
  const auto texts = world().gather_text(text_of(rank));
  if (rank != 0) {
    EXPECT_TRUE(texts.empty());
    return;
  }
  ASSERT_EQ(texts.size(), static_cast<std::size_t>(world().size()));
  for (int r = 0; r < world().size(); ++r) {
    EXPECT_EQ(texts[r], text_of(r)) << r;
  }
}

// The ranks that reach the barrier first keep working until the last arrives (rank 0, 200 ms
// late), and every rank leaves it.
TEST(MpiCommunicator, BarrierBusyKeepsEarlyRanksWorking) {
  world().barrier();
  if (world().rank() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
  int calls = 0;
  world().barrier_busy([&] {
    ++calls;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
  if (world().rank() != 0) {
    EXPECT_GE(calls, 1);
  }
}

}  // namespace
}  // namespace tessera::kernels
