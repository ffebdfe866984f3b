#pragma once
// A time measured at a few sizes, read at any size: the all-reduce among a node's ranks by bytes,
// the optimizer update by parameters. Linear between the two measured sizes around the size asked
// for, extended along the last segment above the largest, held at the smallest's time below it
// (a fixed cost dominates small sizes).
#include <optional>
#include <utility>
#include <vector>

namespace tessera {

class MeasuredCurve {
 public:
  void add(double size, double seconds);  // a size measured twice keeps the later time
  bool usable() const { return points_.size() >= 2; }
  std::size_t sizes() const { return points_.size(); }
  double smallest() const { return points_.front().first; }
  double largest() const { return points_.back().first; }
  // None until two sizes are measured.
  std::optional<double> seconds(double size) const;

 private:
  std::vector<std::pair<double, double>> points_;  // sorted by size
};

}  // namespace tessera
