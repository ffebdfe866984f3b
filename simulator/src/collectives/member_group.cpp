#include "tessera/simulator/collectives/member_group.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <numeric>
#include <stdexcept>
#include <string>

namespace tessera::sim {
namespace {

// One simulation per process and actors on one thread: process-wide state is race-free.
std::uint64_t next_id = 1;

}  // namespace

MemberGroup::MemberGroup(std::vector<int> ranks)
    : ranks_(std::move(ranks)), order_(ranks_.size()), id_(next_id++) {
  std::iota(order_.begin(), order_.end(), std::size_t{0});
  std::sort(order_.begin(), order_.end(),
            [this](std::size_t a, std::size_t b) { return ranks_[a] < ranks_[b]; });
}

std::size_t MemberGroup::index_of(int rank) const {
  const auto it = std::lower_bound(order_.begin(), order_.end(), rank,
                                   [this](std::size_t index, int r) { return ranks_[index] < r; });
  if (it == order_.end() || ranks_[*it] != rank) {
    throw std::out_of_range("rank " + std::to_string(rank) + " is not a member of group " +
                            std::to_string(id_));
  }
  return *it;
}

const MemberGroup& member_group(const std::vector<int>& ranks) {
  static std::map<std::vector<int>, std::unique_ptr<MemberGroup>> interned;
  auto& group = interned[ranks];
  if (!group) group = std::make_unique<MemberGroup>(ranks);
  return *group;
}

}  // namespace tessera::sim
