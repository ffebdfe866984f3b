#pragma once
// The members of a collective, in order, as one object that every member's call shares.
//
// Its identity (id) names the collective's rendezvous, and what is derived from the members alone
// (node groups, the tree's layout, the hierarchical algorithm's rings) is computed once per group.
// Keyed by the ranks themselves, each of p members' calls paid O(p) to find them again (copying
// and comparing the rank list), so that one collective cost O(p^2): at 16,384 GPUs most of a full
// simulation (docs/measurements/2026-11-25-full-mode.md).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessera::sim {

class MemberGroup {
 public:
  explicit MemberGroup(std::vector<int> ranks);
  // The identity is the object: a copy would be another group.
  MemberGroup(const MemberGroup&) = delete;
  MemberGroup& operator=(const MemberGroup&) = delete;

  const std::vector<int>& ranks() const { return ranks_; }
  std::size_t size() const { return ranks_.size(); }
  int operator[](std::size_t index) const { return ranks_[index]; }
  // Unique in the process, never reused.
  std::uint64_t id() const { return id_; }
  // The index of `rank` in the group; throws std::out_of_range if it is not a member.
  std::size_t index_of(int rank) const;

 private:
  std::vector<int> ranks_;
  std::vector<std::size_t> order_;  // indices sorted by rank, for index_of
  std::uint64_t id_;
};

// The group of exactly these ranks, made on the first call and returned by every later call with
// equal ranks (O(p log groups) per call): for callers that hold plain rank lists.
const MemberGroup& member_group(const std::vector<int>& ranks);

}  // namespace tessera::sim
