#include "tessera/core/scenario/nvlink_rings.hpp"

#include <algorithm>
#include <cstddef>

namespace tessera {
namespace {

// Bounds on the search's work (a step: one candidate tried); the exhaustive search over 8 GPUs
// stays below both (a full mesh of 8: 5,040 candidate rings).
constexpr std::size_t kMostCandidateRings = 20000;
constexpr std::size_t kMostPackingSteps = 2000000;

// Free capacity of each direction of each link, by positions in `locals`.
using Capacity = std::vector<std::vector<int>>;

// Every directed ring of direct links through all positions, starting at position 0.
std::vector<std::vector<int>> candidate_rings(const Capacity& capacity) {
  const std::size_t size = capacity.size();
  std::vector<std::vector<int>> rings;
  std::vector<int> path{0};
  std::vector<bool> used(size, false);
  used[0] = true;
  auto extend = [&](auto& self) -> void {
    if (rings.size() >= kMostCandidateRings) return;
    const auto last = static_cast<std::size_t>(path.back());
    if (path.size() == size) {
      if (capacity[last][0] > 0) rings.push_back(path);
      return;
    }
    for (std::size_t next = 0; next < size; ++next) {
      if (used[next] || capacity[last][next] == 0) continue;
      used[next] = true;
      path.push_back(static_cast<int>(next));
      self(self);
      path.pop_back();
      used[next] = false;
    }
  };
  extend(extend);
  return rings;
}

// The largest multiset of candidate rings that fits the capacity: a depth-first search over the
// candidates in order, pruned by the free capacity out of position 0 (each ring leaves it once).
class RingPacking {
 public:
  RingPacking(Capacity capacity, std::vector<std::vector<int>> candidates)
      : capacity_(std::move(capacity)), candidates_(std::move(candidates)) {}

  std::vector<std::vector<int>> best() {
    search(0);
    return best_;
  }

 private:
  bool fits(const std::vector<int>& ring) const {
    for (std::size_t i = 0; i < ring.size(); ++i) {
      if (capacity_[hop_from(ring, i)][hop_to(ring, i)] == 0) return false;
    }
    return true;
  }
  void take(const std::vector<int>& ring, int delta) {
    for (std::size_t i = 0; i < ring.size(); ++i)
      capacity_[hop_from(ring, i)][hop_to(ring, i)] -= delta;
  }
  static std::size_t hop_from(const std::vector<int>& ring, std::size_t i) {
    return static_cast<std::size_t>(ring[i]);
  }
  static std::size_t hop_to(const std::vector<int>& ring, std::size_t i) {
    return static_cast<std::size_t>(ring[(i + 1) % ring.size()]);
  }
  int free_out_of_first() const {
    int free = 0;
    for (int c : capacity_[0]) free += c;
    return free;
  }

  void search(std::size_t first_candidate) {
    if (++steps_ > kMostPackingSteps) return;
    if (chosen_.size() > best_.size()) best_ = chosen_;
    if (chosen_.size() + static_cast<std::size_t>(free_out_of_first()) <= best_.size()) return;
    for (std::size_t k = first_candidate; k < candidates_.size(); ++k) {
      const auto& ring = candidates_[k];
      if (++steps_ > kMostPackingSteps) return;
      if (!fits(ring)) continue;
      take(ring, 1);
      chosen_.push_back(ring);
      search(k);  // k again: a ring may run twice over bonded links
      chosen_.pop_back();
      take(ring, -1);
      if (steps_ > kMostPackingSteps) return;
    }
  }

  Capacity capacity_;
  std::vector<std::vector<int>> candidates_;
  std::vector<std::vector<int>> chosen_;
  std::vector<std::vector<int>> best_;
  std::size_t steps_ = 0;
};

}  // namespace

std::vector<std::vector<int>> nvlink_rings(const NodeSpec& node, const std::vector<int>& locals) {
  const std::size_t size = locals.size();
  if (node.gpu_interconnect != GpuInterconnect::nvlink_mesh || size < 2) return {};
  Capacity capacity(size, std::vector<int>(size, 0));
  for (std::size_t a = 0; a < size; ++a) {
    for (std::size_t b = 0; b < size; ++b)
      capacity[a][b] = node.nvlinks_between(locals[a], locals[b]);
  }
  auto rings = RingPacking(capacity, candidate_rings(capacity)).best();
  for (auto& ring : rings) {
    for (int& position : ring) position = locals[static_cast<std::size_t>(position)];
  }
  return rings;
}

}  // namespace tessera
