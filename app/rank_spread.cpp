#include "rank_spread.hpp"

#include <mpi.h>

#include <climits>
#include <cstdlib>
#include <stdexcept>

#include "tessera/kernels/communicator.hpp"

namespace tessera::app {

bool launched_with_several_ranks() {
  for (const char* variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"}) {
    if (const char* value = std::getenv(variable); value && std::atoi(value) > 1) return true;
  }
  return false;
}

struct RankSpread::World {
  // Initialises MPI (and finalises it at exit) as the real backend does.
  std::unique_ptr<kernels::Communicator> communicator = kernels::mpi_world();
};

namespace {

void check(int status, const char* what) {
  if (status != MPI_SUCCESS) throw std::runtime_error(std::string(what) + " failed");
}

}  // namespace

RankSpread::RankSpread() {
  if (!launched_with_several_ranks()) return;
  world_ = std::make_unique<World>();
  rank_ = world_->communicator->rank();
  size_ = world_->communicator->size();
}

RankSpread::~RankSpread() = default;

std::vector<std::string> RankSpread::gather_all(const std::string& mine) const {
  if (size_ == 1) return {mine};
  if (mine.size() > static_cast<std::size_t>(INT_MAX)) {
    throw std::runtime_error("a rank's answer exceeds MPI's int count");
  }
  int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size_));
  check(MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD),
        "MPI_Allgather");
  std::vector<int> offsets(lengths.size(), 0);
  long long total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = static_cast<int>(total);
    total += lengths[r];
  }
  if (total > INT_MAX) throw std::runtime_error("the ranks' answers exceed MPI's int count");
  std::string all(static_cast<std::size_t>(total), '\0');
  check(MPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                       MPI_CHAR, MPI_COMM_WORLD),
        "MPI_Allgatherv");
  std::vector<std::string> texts;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    texts.push_back(
        all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  }
  return texts;
}

std::string RankSpread::broadcast(const std::string& from_rank_zero) const {
  if (size_ == 1) return from_rank_zero;
  int length = static_cast<int>(from_rank_zero.size());
  check(MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Bcast");
  std::string text =
      rank_ == 0 ? from_rank_zero : std::string(static_cast<std::size_t>(length), '\0');
  check(MPI_Bcast(text.data(), length, MPI_CHAR, 0, MPI_COMM_WORLD), "MPI_Bcast");
  return text;
}

bool RankSpread::any(bool flag) const {
  if (size_ == 1) return flag;
  int mine = flag ? 1 : 0, sum = 0;
  check(MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
  return sum > 0;
}

}  // namespace tessera::app
