#include "tessera/core/common/measured_curve.hpp"

#include <algorithm>

namespace tessera {

void MeasuredCurve::add(double size, double seconds) {
  const auto at = std::lower_bound(points_.begin(), points_.end(), std::make_pair(size, 0.0),
                                   [](const auto& a, const auto& b) { return a.first < b.first; });
  if (at != points_.end() && at->first == size) {
    at->second = seconds;
  } else {
    points_.insert(at, {size, seconds});
  }
}

std::optional<double> MeasuredCurve::seconds(double size) const {
  if (!usable()) return std::nullopt;
  if (size <= points_.front().first) return points_.front().second;
  auto upper = std::lower_bound(points_.begin(), points_.end(), std::make_pair(size, 0.0),
                                [](const auto& a, const auto& b) { return a.first < b.first; });
  if (upper == points_.end()) --upper;  // beyond the largest: along the last segment
  const auto lower = std::prev(upper);
  const double slope = (upper->second - lower->second) / (upper->first - lower->first);
  return std::max(0.0, lower->second + slope * (size - lower->first));
}

}  // namespace tessera
