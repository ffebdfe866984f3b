#pragma once
// Work spread over the MPI ranks of `mpirun -np N tessera plan|run ...`: rank r takes the items
// r, r + N, r + 2N, ... of every batch, and every rank gets every answer back, so all ranks make
// the same decisions next and rank 0 alone writes the files. Without mpirun (or with one rank)
// there is one rank and nothing is sent.
#include <memory>
#include <string>
#include <vector>

namespace tessera::app {

// Whether this process was started by mpirun (or srun) among several ranks.
bool launched_with_several_ranks();

class RankSpread {
 public:
  // Initialises MPI when launched with several ranks.
  RankSpread();
  ~RankSpread();
  RankSpread(const RankSpread&) = delete;
  RankSpread& operator=(const RankSpread&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool writer() const { return rank_ == 0; }
  // Whether item `index` of a batch is this rank's.
  bool mine(std::size_t index) const { return static_cast<int>(index % size_) == rank_; }

  // Every rank's text, by rank (an all-gather); `mine` is this rank's.
  std::vector<std::string> gather_all(const std::string& mine) const;
  // Rank 0's text on every rank.
  std::string broadcast(const std::string& from_rank_zero) const;
  // Sums a flag over the ranks: whether any rank saw it (e.g. a failure), so all stop together.
  bool any(bool flag) const;

 private:
  struct World;
  std::unique_ptr<World> world_;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace tessera::app
