#pragma once
// Communicator over an MPI communicator on host memory (CPU ranks). Non-blocking operations
// return requests that own nothing but the MPI request: the caller keeps the buffers alive until
// wait() returns, as with MPI itself.
#include <mpi.h>

#include <memory>

#include "tessera/kernels/communicator.hpp"

namespace tessera::kernels {

class MpiCommunicator final : public Communicator {
 public:
  // Takes ownership of `communicator` (freed on destruction unless it is MPI_COMM_WORLD).
  explicit MpiCommunicator(MPI_Comm communicator);
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::unique_ptr<Communicator> split(int color, int key) override;
  std::unique_ptr<CommRequest> send(const float* data, std::size_t floats, int peer,
                                    int tag) override;
  std::unique_ptr<CommRequest> receive(float* data, std::size_t floats, int peer, int tag) override;
  void wait_for_message(int peer, int tag) override;
  void allreduce_sum(float* data, std::size_t floats) override;
  void allreduce_sum(double* data, std::size_t count) override;
  void allreduce_max(double* data, std::size_t count) override;
  std::unique_ptr<CommRequest> allreduce_sum_async(float* data, std::size_t floats) override;
  std::unique_ptr<CommRequest> reduce_scatter_sum_async(float* data,
                                                        std::size_t floats_per_rank) override;
  void allgather(float* data, std::size_t floats_per_rank) override;
  void alltoall(const float* send, float* receive, std::size_t floats_per_peer) override;
  void barrier() override;
  void barrier_idle() override;
  void barrier_busy(const std::function<void()>& work) override;
  std::vector<std::string> gather_text(const std::string& text) override;

 private:
  MPI_Comm communicator_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace tessera::kernels
