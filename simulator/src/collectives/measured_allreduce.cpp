#include "tessera/simulator/collectives/measured_allreduce.hpp"

#include <algorithm>
#include <cstdio>

namespace tessera::sim {
namespace {

// "bytes 1000000 ranks 2" -> (1e6, 2); anything else -> none.
std::optional<std::pair<double, int>> parse_shape(const std::string& shape) {
  double bytes = 0;
  int ranks = 0;
  char rest = 0;
  if (std::sscanf(shape.c_str(), "bytes %lf ranks %d%c", &bytes, &ranks, &rest) != 2) {
    return std::nullopt;
  }
  if (!(bytes > 0) || ranks < 2) return std::nullopt;
  return std::make_pair(bytes, ranks);
}

std::string bytes_text(double bytes) {
  const char* units[] = {"B", "kB", "MB", "GB", "TB"};
  int unit = 0;
  while (bytes >= 1000 && unit < 4) {
    bytes /= 1000;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, "%.3g %s", bytes, units[unit]);
  return text;
}

}  // namespace

MeasuredAllreduce::MeasuredAllreduce(const ProfileDatabase& profiles, const std::string& device) {
  for (const auto& row : profiles.rows()) {
    if (row.device != device || row.op != "allreduce" || !row.ok || !(row.time_seconds > 0)) {
      continue;
    }
    if (const auto parsed = parse_shape(row.shape)) {
      by_ranks_[parsed->second].add(parsed->first, row.time_seconds);
    }
  }
  std::erase_if(by_ranks_, [](const auto& entry) { return !entry.second.usable(); });
}

std::optional<double> MeasuredAllreduce::seconds(int ranks, double bytes) const {
  const auto it = by_ranks_.find(ranks);
  if (it == by_ranks_.end()) return std::nullopt;
  return it->second.seconds(bytes);
}

std::string MeasuredAllreduce::description() const {
  std::string text;
  for (const auto& [ranks, curve] : by_ranks_) {
    if (!text.empty()) text += "; ";
    text += std::to_string(ranks) + " ranks: " + std::to_string(curve.sizes()) + " sizes, " +
            bytes_text(curve.smallest()) + ".." + bytes_text(curve.largest());
  }
  return text;
}

}  // namespace tessera::sim
