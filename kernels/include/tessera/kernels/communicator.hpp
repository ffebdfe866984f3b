#pragma once
// Communication between the ranks of a real run: halo exchanges with spatial neighbours,
// batch-norm sums and gradient all-reduces, the redistribution all-to-all, stage transfers.
// MPI implements it over host memory (CPU ranks), NCCL over device memory (GPU ranks, bootstrapped
// through MPI). Buffers live where the rank's Device allocates them.
#include <cstddef>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessera::kernels {

// A posted non-blocking operation; wait() blocks until it is complete (idempotent).
class CommRequest {
 public:
  virtual ~CommRequest() = default;
  virtual void wait() = 0;
  // Lets the transport move the operation on without blocking (MPI moves a large message only
  // inside its calls, so a sender busy computing would hold its receiver up).
  virtual void progress() {}
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Ranks with the same colour form a sub-communicator, ordered by key (like MPI_Comm_split).
  virtual std::unique_ptr<Communicator> split(int color, int key) = 0;

  // Non-blocking point-to-point; `tag` tells concurrent exchanges apart.
  virtual std::unique_ptr<CommRequest> send(const float* data, std::size_t floats, int peer,
                                            int tag) = 0;
  virtual std::unique_ptr<CommRequest> receive(float* data, std::size_t floats, int peer,
                                               int tag) = 0;
  // Blocks until a message from `peer` with `tag` has arrived, receiving nothing: the time
  // waited for the sender, apart from the transfer's. Where the transport cannot tell (NCCL),
  // returns at once and the whole wait counts as the receive.
  virtual void wait_for_message(int /*peer*/, int /*tag*/) {}
  // In-place sums over every rank; the non-blocking form lets gradient buckets overlap backward
  // where the transport progresses on its own (NCCL's stream; MPI's completes at the call).
  virtual void allreduce_sum(float* data, std::size_t floats) = 0;
  virtual void allreduce_sum(double* data, std::size_t count) = 0;  // batch-norm sums (host)
  virtual std::unique_ptr<CommRequest> allreduce_sum_async(float* data, std::size_t floats) = 0;
  // In-place maxima over every rank (host memory: a loss's per-position maxima over classes
  // split across ranks).
  virtual void allreduce_max(double* data, std::size_t count) = 0;
  // Sharded data (ZeRO): `data` holds size() blocks of `floats_per_rank`. The reduce-scatter
  // leaves in rank r's block r the sum of every rank's block r (the other blocks are left
  // undefined); the all-gather fills every block from its owner.
  virtual std::unique_ptr<CommRequest> reduce_scatter_sum_async(float* data,
                                                                std::size_t floats_per_rank) = 0;
  virtual void allgather(float* data, std::size_t floats_per_rank) = 0;
  // Rank r sends send[p*floats_per_peer ...] to rank p and receives into receive[r' * ...].
  virtual void alltoall(const float* send, float* receive, std::size_t floats_per_peer) = 0;
  virtual void barrier() = 0;
  // A barrier for ranks with nothing to do meanwhile: they should not keep a core busy polling
  // (MPI: a non-blocking barrier tested every millisecond in between sleeps).
  virtual void barrier_idle() { barrier(); }
  // A barrier during which this rank keeps calling `work` (each call short: a rank that arrives
  // last waits for the call in progress), so that ranks still busy do not find it idle.
  virtual void barrier_busy(const std::function<void()>& /*work*/) { barrier(); }
  // Rank 0 receives every rank's `text` in rank order (its own first), the other ranks an empty
  // list: host-side results one process writes (a profile's rows). NCCL moves device memory only
  // and does not offer it (std::logic_error).
  virtual std::vector<std::string> gather_text(const std::string& /*text*/) {
    throw std::logic_error("gather_text: this transport moves device memory only");
  }
};

void wait_all(std::vector<std::unique_ptr<CommRequest>>& requests);

// MPI_COMM_WORLD (initialising MPI with thread support funneled if nobody has); host buffers.
std::unique_ptr<Communicator> mpi_world();
// NCCL over the ranks of `bootstrap` (which distributes the unique id), on the current CUDA device;
// throws std::runtime_error without CUDA parts.
std::unique_ptr<Communicator> nccl_over(Communicator& bootstrap);

}  // namespace tessera::kernels
