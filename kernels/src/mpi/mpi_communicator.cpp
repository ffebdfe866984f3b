#include "mpi/mpi_communicator.hpp"

#include <chrono>
#include <climits>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace tessera::kernels {
namespace {

void check(int status, const char* what) {
  if (status == MPI_SUCCESS) return;
  char message[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, message, &length);
  throw std::runtime_error(std::string(what) + " failed: " + std::string(message, length));
}

// MPI counts are ints; larger messages would silently wrap.
int mpi_count(std::size_t count) {
  if (count > static_cast<std::size_t>(INT_MAX)) {
    throw std::invalid_argument("message of " + std::to_string(count) +
                                " elements exceeds MPI's int count");
  }
  return static_cast<int>(count);
}

class MpiRequest final : public CommRequest {
 public:
  MpiRequest() = default;
  MPI_Request* handle() { return &request_; }
  void wait() override {
    if (request_ == MPI_REQUEST_NULL) return;  // MPI_Wait resets it, so wait() is idempotent
    check(MPI_Wait(&request_, MPI_STATUS_IGNORE), "MPI_Wait");
  }
  void progress() override {
    if (request_ == MPI_REQUEST_NULL) return;
    int done = 0;
    check(MPI_Test(&request_, &done, MPI_STATUS_IGNORE), "MPI_Test");
  }
  ~MpiRequest() override {
    // A request dropped unwaited would leave MPI writing into freed memory; wait instead.
    if (request_ != MPI_REQUEST_NULL) MPI_Wait(&request_, MPI_STATUS_IGNORE);
  }

 private:
  MPI_Request request_ = MPI_REQUEST_NULL;
};

// Finalizes MPI at exit when this library initialised it, so that mpirun sees a clean exit.
struct MpiLifetime {
  bool initialised_here = false;
  ~MpiLifetime() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (initialised_here && !finalized) MPI_Finalize();
  }
};

void ensure_mpi_initialised() {
  static MpiLifetime lifetime;
  int initialised = 0;
  check(MPI_Initialized(&initialised), "MPI_Initialized");
  if (initialised) return;
  int provided = 0;
  check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
  lifetime.initialised_here = true;
}

}  // namespace

MpiCommunicator::MpiCommunicator(MPI_Comm communicator) : communicator_(communicator) {
  check(MPI_Comm_rank(communicator_, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(communicator_, &size_), "MPI_Comm_size");
}

MpiCommunicator::~MpiCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && communicator_ != MPI_COMM_WORLD) MPI_Comm_free(&communicator_);
}

std::unique_ptr<Communicator> MpiCommunicator::split(int color, int key) {
  MPI_Comm part = MPI_COMM_NULL;
  check(MPI_Comm_split(communicator_, color, key, &part), "MPI_Comm_split");
  return std::make_unique<MpiCommunicator>(part);
}

std::unique_ptr<CommRequest> MpiCommunicator::send(const float* data, std::size_t floats, int peer,
                                                   int tag) {
  auto request = std::make_unique<MpiRequest>();
  check(MPI_Isend(data, mpi_count(floats), MPI_FLOAT, peer, tag, communicator_, request->handle()),
        "MPI_Isend");
  return request;
}

std::unique_ptr<CommRequest> MpiCommunicator::receive(float* data, std::size_t floats, int peer,
                                                      int tag) {
  auto request = std::make_unique<MpiRequest>();
  check(MPI_Irecv(data, mpi_count(floats), MPI_FLOAT, peer, tag, communicator_, request->handle()),
        "MPI_Irecv");
  return request;
}

void MpiCommunicator::wait_for_message(int peer, int tag) {
  check(MPI_Probe(peer, tag, communicator_, MPI_STATUS_IGNORE), "MPI_Probe");
}

void MpiCommunicator::allreduce_sum(float* data, std::size_t floats) {
  check(MPI_Allreduce(MPI_IN_PLACE, data, mpi_count(floats), MPI_FLOAT, MPI_SUM, communicator_),
        "MPI_Allreduce");
}

void MpiCommunicator::allreduce_sum(double* data, std::size_t count) {
  check(MPI_Allreduce(MPI_IN_PLACE, data, mpi_count(count), MPI_DOUBLE, MPI_SUM, communicator_),
        "MPI_Allreduce");
}

void MpiCommunicator::allreduce_max(double* data, std::size_t count) {
  check(MPI_Allreduce(MPI_IN_PLACE, data, mpi_count(count), MPI_DOUBLE, MPI_MAX, communicator_),
        "MPI_Allreduce");
}

// Completes at the call. Open MPI progresses a non-blocking collective only inside MPI calls, and
// a CPU rank has no spare core to call it from: MPI_Iallreduce made the bucket's copies happen
// inside later halo exchanges and the redistribution instead, and CPU steps were slower than
// with the blocking sum (docs/measurements/2026-11-21.md). The simulator knows (cluster_spec.hpp's
// overlaps_communication).
std::unique_ptr<CommRequest> MpiCommunicator::allreduce_sum_async(float* data, std::size_t floats) {
  allreduce_sum(data, floats);
  return std::make_unique<MpiRequest>();
}

// Completes at the call, as the all-reduce does. MPI's in-place reduce-scatter leaves the sum at
// the start of the buffer: it is moved to the rank's own block.
std::unique_ptr<CommRequest> MpiCommunicator::reduce_scatter_sum_async(
    float* data, std::size_t floats_per_rank) {
  check(MPI_Reduce_scatter_block(MPI_IN_PLACE, data, mpi_count(floats_per_rank), MPI_FLOAT, MPI_SUM,
                                 communicator_),
        "MPI_Reduce_scatter_block");
  if (rank_ > 0 && floats_per_rank > 0) {
    std::memmove(data + static_cast<std::size_t>(rank_) * floats_per_rank, data,
                 floats_per_rank * sizeof(float));
  }
  return std::make_unique<MpiRequest>();
}

void MpiCommunicator::allgather(float* data, std::size_t floats_per_rank) {
  check(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, data, mpi_count(floats_per_rank),
                      MPI_FLOAT, communicator_),
        "MPI_Allgather");
}

void MpiCommunicator::alltoall(const float* send, float* receive, std::size_t floats_per_peer) {
  const int count = mpi_count(floats_per_peer);
  check(MPI_Alltoall(send, count, MPI_FLOAT, receive, count, MPI_FLOAT, communicator_),
        "MPI_Alltoall");
}

void MpiCommunicator::barrier_idle() {
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Ibarrier(communicator_, &request), "MPI_Ibarrier");
  for (int done = 0;;) {
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

std::vector<std::string> MpiCommunicator::gather_text(const std::string& text) {
  const int length = mpi_count(text.size());
  std::vector<int> lengths(static_cast<std::size_t>(rank() == 0 ? size() : 0));
  check(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, communicator_),
        "MPI_Gather");
  std::vector<int> offsets(lengths.size());
  std::size_t total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = mpi_count(total);
    total += static_cast<std::size_t>(lengths[r]);
  }
  std::string all(total, '\0');
  check(MPI_Gatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                    MPI_CHAR, 0, communicator_),
        "MPI_Gatherv");
  std::vector<std::string> texts;
  for (std::size_t r = 0; r < lengths.size(); ++r)
    texts.push_back(
        all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  return texts;
}

void MpiCommunicator::barrier_busy(const std::function<void()>& work) {
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Ibarrier(communicator_, &request), "MPI_Ibarrier");
  for (int done = 0;;) {
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
    if (done) return;
    work();
  }
}

void MpiCommunicator::barrier() {
  check(MPI_Barrier(communicator_), "MPI_Barrier");
}

void wait_all(std::vector<std::unique_ptr<CommRequest>>& requests) {
  for (auto& request : requests) {
    if (request) request->wait();
  }
}

std::unique_ptr<Communicator> mpi_world() {
  ensure_mpi_initialised();
  return std::make_unique<MpiCommunicator>(MPI_COMM_WORLD);
}

}  // namespace tessera::kernels
