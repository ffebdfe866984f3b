#include "cuda/nccl_communicator.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "cuda/cuda_check.hpp"

namespace tessera::kernels {
namespace cuda {
namespace {

std::shared_ptr<CUevent_st> make_event() {
  cudaEvent_t event = nullptr;
  TESSERA_CUDA_CHECK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  return {event, [](cudaEvent_t owned) { cudaEventDestroy(owned); }};
}

}  // namespace

struct NcclCommunicator::PendingGroup {
  std::vector<PointToPoint> operations;
  std::shared_ptr<CUevent_st> done;  // set once issued
};

// A send or receive: waiting issues its group if nobody has yet. The communicator must outlive
// its requests.
class NcclCommunicator::GroupRequest final : public CommRequest {
 public:
  GroupRequest(NcclCommunicator& owner, std::shared_ptr<PendingGroup> group)
      : owner_(owner), group_(std::move(group)) {}
  void wait() override {
    if (!group_->done) owner_.flush_point_to_point();
    TESSERA_CUDA_CHECK(cudaEventSynchronize(group_->done.get()));
  }

 private:
  NcclCommunicator& owner_;
  std::shared_ptr<PendingGroup> group_;
};

class NcclCommunicator::EventRequest final : public CommRequest {
 public:
  explicit EventRequest(std::shared_ptr<CUevent_st> done) : done_(std::move(done)) {}
  void wait() override { TESSERA_CUDA_CHECK(cudaEventSynchronize(done_.get())); }

 private:
  std::shared_ptr<CUevent_st> done_;
};

NcclCommunicator::NcclCommunicator(ncclComm_t communicator) : communicator_(communicator) {
  try {
    TESSERA_CUDA_CHECK(ncclCommCuDevice(communicator_, &device_));
    TESSERA_CUDA_CHECK(ncclCommUserRank(communicator_, &rank_));
    TESSERA_CUDA_CHECK(ncclCommCount(communicator_, &size_));
    TESSERA_CUDA_CHECK(cudaSetDevice(device_));
    // Non-blocking: the legacy-stream event that orders NCCL after the device's kernels must not
    // in turn wait for NCCL operations still waiting for their peers.
    TESSERA_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    device_work_done_ = make_event();
    scratch_ = std::make_unique<DeviceScratch>(stream_);
  } catch (...) {
    if (stream_ != nullptr) cudaStreamDestroy(stream_);
    ncclCommDestroy(communicator_);
    throw;
  }
}

NcclCommunicator::~NcclCommunicator() {
  try {
    // Peers may be waiting for sends that were posted but never waited on.
    flush_point_to_point();
    synchronize();
  } catch (const std::exception&) {
    // Nothing to report to from a destructor; the communicator is torn down regardless.
  }
  scratch_.reset();
  ncclCommDestroy(communicator_);
  cudaStreamDestroy(stream_);
}

void NcclCommunicator::start_after_device_work() {
  TESSERA_CUDA_CHECK(cudaSetDevice(device_));
  // An event on the legacy default stream completes after all preceding work in every blocking
  // stream of the device.
  TESSERA_CUDA_CHECK(cudaEventRecord(device_work_done_.get(), cudaStreamLegacy));
  TESSERA_CUDA_CHECK(cudaStreamWaitEvent(stream_, device_work_done_.get(), 0));
}

std::shared_ptr<CUevent_st> NcclCommunicator::record_completion() {
  auto done = make_event();
  TESSERA_CUDA_CHECK(cudaEventRecord(done.get(), stream_));
  return done;
}

void NcclCommunicator::synchronize() {
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

std::unique_ptr<CommRequest> NcclCommunicator::post(const PointToPoint& operation) {
  if (operation.peer < 0 || operation.peer >= size_) {
    throw std::invalid_argument("NCCL peer " + std::to_string(operation.peer) +
                                " outside the communicator's " + std::to_string(size_) + " ranks");
  }
  if (!pending_) pending_ = std::make_shared<PendingGroup>();
  pending_->operations.push_back(operation);
  return std::make_unique<GroupRequest>(*this, pending_);
}

std::unique_ptr<CommRequest> NcclCommunicator::send(const float* data, std::size_t floats, int peer,
                                                    int /*tag*/) {
  // The record holds the buffer of either direction; a send only reads it.
  return post({true, const_cast<float*>(data), floats, peer});
}

std::unique_ptr<CommRequest> NcclCommunicator::receive(float* data, std::size_t floats, int peer,
                                                       int /*tag*/) {
  return post({false, data, floats, peer});
}

void NcclCommunicator::flush_point_to_point() {
  if (!pending_) return;
  const std::shared_ptr<PendingGroup> group = std::move(pending_);
  pending_.reset();
  start_after_device_work();
  TESSERA_CUDA_CHECK(ncclGroupStart());
  for (const PointToPoint& operation : group->operations) {
    const ncclResult_t status = operation.send
                                    ? ncclSend(operation.data, operation.floats, ncclFloat,
                                               operation.peer, communicator_, stream_)
                                    : ncclRecv(operation.data, operation.floats, ncclFloat,
                                               operation.peer, communicator_, stream_);
    if (status != ncclSuccess) {
      ncclGroupEnd();
      TESSERA_CUDA_CHECK(status);
    }
  }
  TESSERA_CUDA_CHECK(ncclGroupEnd());
  group->done = record_completion();
}

void NcclCommunicator::allreduce_sum(float* data, std::size_t floats) {
  allreduce_sum_async(data, floats)->wait();
}

std::unique_ptr<CommRequest> NcclCommunicator::allreduce_sum_async(float* data,
                                                                   std::size_t floats) {
  flush_point_to_point();
  start_after_device_work();
  TESSERA_CUDA_CHECK(ncclAllReduce(data, data, floats, ncclFloat, ncclSum, communicator_, stream_));
  return std::make_unique<EventRequest>(record_completion());
}

void NcclCommunicator::allreduce_sum(double* data, std::size_t count) {
  allreduce_host(data, count, ncclSum);
}

void NcclCommunicator::allreduce_max(double* data, std::size_t count) {
  allreduce_host(data, count, ncclMax);
}

// Host doubles through a device staging buffer, the stream waited for.
void NcclCommunicator::allreduce_host(double* data, std::size_t count, ncclRedOp_t operation) {
  flush_point_to_point();
  start_after_device_work();
  const std::size_t bytes = count * sizeof(double);
  void* staging = scratch_->reserve(bytes);
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(staging, data, bytes, cudaMemcpyHostToDevice, stream_));
  TESSERA_CUDA_CHECK(
      ncclAllReduce(staging, staging, count, ncclDouble, operation, communicator_, stream_));
  TESSERA_CUDA_CHECK(cudaMemcpyAsync(data, staging, bytes, cudaMemcpyDeviceToHost, stream_));
  synchronize();
}

// In place as NCCL defines it: the rank's block of the buffer is the reduce-scatter's output
// and the all-gather's input.
std::unique_ptr<CommRequest> NcclCommunicator::reduce_scatter_sum_async(
    float* data, std::size_t floats_per_rank) {
  flush_point_to_point();
  start_after_device_work();
  float* own = data + static_cast<std::size_t>(rank_) * floats_per_rank;
  TESSERA_CUDA_CHECK(
      ncclReduceScatter(data, own, floats_per_rank, ncclFloat, ncclSum, communicator_, stream_));
  return std::make_unique<EventRequest>(record_completion());
}

void NcclCommunicator::allgather(float* data, std::size_t floats_per_rank) {
  flush_point_to_point();
  start_after_device_work();
  const float* own = data + static_cast<std::size_t>(rank_) * floats_per_rank;
  TESSERA_CUDA_CHECK(ncclAllGather(own, data, floats_per_rank, ncclFloat, communicator_, stream_));
  synchronize();
}

void NcclCommunicator::alltoall(const float* send, float* receive, std::size_t floats_per_peer) {
  flush_point_to_point();
  start_after_device_work();
  TESSERA_CUDA_CHECK(ncclGroupStart());
  for (int peer = 0; peer < size_; ++peer) {
    const std::size_t offset = static_cast<std::size_t>(peer) * floats_per_peer;
    ncclResult_t status =
        ncclSend(send + offset, floats_per_peer, ncclFloat, peer, communicator_, stream_);
    if (status == ncclSuccess) {
      status = ncclRecv(receive + offset, floats_per_peer, ncclFloat, peer, communicator_, stream_);
    }
    if (status != ncclSuccess) {
      ncclGroupEnd();
      TESSERA_CUDA_CHECK(status);
    }
  }
  TESSERA_CUDA_CHECK(ncclGroupEnd());
  synchronize();
}

void NcclCommunicator::barrier() {
  flush_point_to_point();
  start_after_device_work();
  auto* token = static_cast<float*>(scratch_->reserve(sizeof(float)));
  TESSERA_CUDA_CHECK(ncclAllReduce(token, token, 1, ncclFloat, ncclSum, communicator_, stream_));
  synchronize();
}

std::unique_ptr<Communicator> NcclCommunicator::split(int color, int key) {
  if (color < 0) {
    throw std::invalid_argument("NCCL split colour must be >= 0, got " + std::to_string(color));
  }
  flush_point_to_point();
  synchronize();
  TESSERA_CUDA_CHECK(cudaSetDevice(device_));
  ncclComm_t part = nullptr;
  TESSERA_CUDA_CHECK(ncclCommSplit(communicator_, color, key, &part, nullptr));
  return std::make_unique<NcclCommunicator>(part);
}

}  // namespace cuda

std::unique_ptr<Communicator> nccl_over(Communicator& bootstrap) {
  // Rank 0's unique id reaches every rank through the one collective the bootstrap has for
  // arbitrary bytes without a reinterpretation: a sum of doubles, each holding one byte (0..255,
  // exact), zero on every other rank.
  ncclUniqueId id{};
  if (bootstrap.rank() == 0) TESSERA_CUDA_CHECK(ncclGetUniqueId(&id));
  std::vector<double> bytes(sizeof(id.internal), 0.0);
  if (bootstrap.rank() == 0) {
    for (std::size_t index = 0; index < bytes.size(); ++index) {
      bytes[index] = static_cast<unsigned char>(id.internal[index]);
    }
  }
  bootstrap.allreduce_sum(bytes.data(), bytes.size());
  for (std::size_t index = 0; index < bytes.size(); ++index) {
    id.internal[index] = static_cast<char>(static_cast<unsigned char>(std::lround(bytes[index])));
  }
  ncclComm_t communicator = nullptr;
  TESSERA_CUDA_CHECK(ncclCommInitRank(&communicator, bootstrap.size(), id, bootstrap.rank()));
  return std::make_unique<cuda::NcclCommunicator>(communicator);
}

}  // namespace tessera::kernels
