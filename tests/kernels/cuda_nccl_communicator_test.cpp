// The NCCL communicator on one rank (one GPU): every operation's data path, grouped point-to-point
// to itself, the double all-reduce staged through device memory, split. The bootstrap is a
// one-rank stand-in (its all-reduce over one rank is the identity, as MPI's is), so this runs
// without mpirun; several ranks need one GPU each and run under mpirun. Skips without a CUDA
// device.
#include <gtest/gtest.h>

#include <numeric>
#include <stdexcept>
#include <vector>

#include "cuda_test_support.hpp"
#include "tessera/kernels/communicator.hpp"

namespace tessera::kernels {
namespace {

// A communicator of one rank: every collective leaves the data as it is. Only what nccl_over
// uses (rank, size, the double all-reduce) is exercised.
class SingleRank final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::unique_ptr<Communicator> split(int, int) override { return std::make_unique<SingleRank>(); }
  std::unique_ptr<CommRequest> send(const float*, std::size_t, int, int) override {
    throw std::logic_error("a single rank has no peer");
  }
  std::unique_ptr<CommRequest> receive(float*, std::size_t, int, int) override {
    throw std::logic_error("a single rank has no peer");
  }
  void allreduce_sum(float*, std::size_t) override {}
  void allreduce_sum(double*, std::size_t) override {}
  void allreduce_max(double*, std::size_t) override {}
  std::unique_ptr<CommRequest> allreduce_sum_async(float*, std::size_t) override {
    throw std::logic_error("not used by nccl_over");
  }
  std::unique_ptr<CommRequest> reduce_scatter_sum_async(float*, std::size_t) override {
    throw std::logic_error("not used by nccl_over");
  }
  void allgather(float*, std::size_t) override {}
  void alltoall(const float*, float*, std::size_t) override {}
  void barrier() override {}
};

class NcclCommunicator : public testing::WithCudaDevice<> {
 protected:
  std::vector<float> round_trip(const std::vector<float>& values,
                                const std::function<void(float*)>& operation) {
    auto memory = gpu().allocate(values.size() * sizeof(float));
    gpu().copy_to_device(values.data(), memory->data(), values.size());
    operation(memory->data());
    std::vector<float> back(values.size());
    gpu().copy_to_host(memory->data(), back.data(), back.size());
    return back;
  }
};

TEST_F(NcclCommunicator, OneRankCollectivesKeepTheData) {
  SingleRank bootstrap;
  const auto nccl = nccl_over(bootstrap);
  EXPECT_EQ(nccl->rank(), 0);
  EXPECT_EQ(nccl->size(), 1);
  std::vector<float> values(1000);
  std::iota(values.begin(), values.end(), -3.0f);
  EXPECT_EQ(round_trip(values, [&](float* data) { nccl->allreduce_sum(data, values.size()); }),
            values);
  EXPECT_EQ(
      round_trip(values,
                 [&](float* data) { nccl->allreduce_sum_async(data, values.size())->wait(); }),
      values);
  std::vector<double> sums = {1.5, -2.25, 1e300};
  nccl->allreduce_sum(sums.data(), sums.size());
  EXPECT_EQ(sums, (std::vector<double>{1.5, -2.25, 1e300}));
  nccl->barrier();
}

TEST_F(NcclCommunicator, GroupedSendToItselfAndAllToAll) {
  SingleRank bootstrap;
  const auto nccl = nccl_over(bootstrap);
  std::vector<float> values(257);
  std::iota(values.begin(), values.end(), 1.0f);
  auto source = gpu().allocate(values.size() * sizeof(float));
  auto target = gpu().allocate(values.size() * sizeof(float));
  gpu().copy_to_device(values.data(), source->data(), values.size());
  gpu().fill(target->data(), values.size(), 0.0f);
  // Posted in the order a halo exchange posts them: the send first, waited together.
  std::vector<std::unique_ptr<CommRequest>> requests;
  requests.push_back(nccl->send(source->data(), values.size(), 0, 7));
  requests.push_back(nccl->receive(target->data(), values.size(), 0, 7));
  for (auto& request : requests) request->wait();
  requests.front()->wait();  // idempotent
  std::vector<float> back(values.size());
  gpu().copy_to_host(target->data(), back.data(), back.size());
  EXPECT_EQ(back, values);

  gpu().fill(target->data(), values.size(), 0.0f);
  nccl->alltoall(source->data(), target->data(), values.size());
  gpu().copy_to_host(target->data(), back.data(), back.size());
  EXPECT_EQ(back, values);
}

TEST_F(NcclCommunicator, SplitsAndRejectsBadArguments) {
  SingleRank bootstrap;
  const auto nccl = nccl_over(bootstrap);
  const auto part = nccl->split(3, 0);
  EXPECT_EQ(part->size(), 1);
  EXPECT_THROW(nccl->split(-1, 0), std::invalid_argument);
  auto memory = gpu().allocate(sizeof(float));
  EXPECT_THROW(nccl->send(memory->data(), 1, 1, 0), std::invalid_argument);
}

}  // namespace
}  // namespace tessera::kernels
