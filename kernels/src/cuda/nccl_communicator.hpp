#pragma once
// Communicator over NCCL on device memory (GPU ranks), one rank per GPU (NCCL refuses two ranks of
// one communicator on the same GPU). Operations run on the communicator's own non-blocking stream
// and start after every kernel issued so far on the process's blocking streams (the CUDA
// device's compute and copy streams): an event recorded on the legacy default stream marks that
// point. Requests wait on CUDA events.
//
// Point-to-point: NCCL matches sends and receives between two ranks in posting order and has no
// tags (they are accepted and ignored). Sends and receives are collected and issued together as
// one ncclGroupStart/End group when a request is waited on or any other operation starts, so an
// exchange that posts all its sends and receives before waiting (as halo exchanges do) cannot
// deadlock on NCCL's blocking point-to-point semantics.
#include <cuda_runtime.h>
#include <nccl.h>

#include <memory>
#include <vector>

#include "cuda/cuda_memory.hpp"
#include "tessera/kernels/communicator.hpp"

namespace tessera::kernels::cuda {

class NcclCommunicator final : public Communicator {
 public:
  // Takes ownership of `communicator`, which lives on the current CUDA device.
  explicit NcclCommunicator(ncclComm_t communicator);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::unique_ptr<Communicator> split(int color, int key) override;
  std::unique_ptr<CommRequest> send(const float* data, std::size_t floats, int peer,
                                    int tag) override;
  std::unique_ptr<CommRequest> receive(float* data, std::size_t floats, int peer, int tag) override;
  void allreduce_sum(float* data, std::size_t floats) override;
  // Host doubles (batch-norm sums), staged through device memory as ncclDouble.
  void allreduce_sum(double* data, std::size_t count) override;
  void allreduce_max(double* data, std::size_t count) override;
  std::unique_ptr<CommRequest> reduce_scatter_sum_async(float* data,
                                                        std::size_t floats_per_rank) override;
  void allgather(float* data, std::size_t floats_per_rank) override;
  std::unique_ptr<CommRequest> allreduce_sum_async(float* data, std::size_t floats) override;
  void alltoall(const float* send, float* receive, std::size_t floats_per_peer) override;
  void barrier() override;

  // Issues the collected sends and receives as one group (requests call it on wait()).
  void flush_point_to_point();

 private:
  struct PointToPoint {
    bool send = true;
    float* data = nullptr;
    std::size_t floats = 0;
    int peer = 0;
  };
  struct PendingGroup;
  class GroupRequest;
  class EventRequest;

  std::unique_ptr<CommRequest> post(const PointToPoint& operation);
  void allreduce_host(double* data, std::size_t count, ncclRedOp_t operation);
  void start_after_device_work();
  std::shared_ptr<CUevent_st> record_completion();
  void synchronize();

  ncclComm_t communicator_;
  int device_ = 0;
  int rank_ = 0;
  int size_ = 1;
  cudaStream_t stream_ = nullptr;
  std::shared_ptr<CUevent_st> device_work_done_;
  std::shared_ptr<PendingGroup> pending_;
  std::unique_ptr<DeviceScratch> scratch_;  // on stream_, created with it
};

}  // namespace tessera::kernels::cuda
