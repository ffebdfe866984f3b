#pragma once
// Which points `--trace FILE` traces, and where: FILE for one point (--trace-point, default the
// last point run: the last of --points when given), or, when FILE contains "{point}", every point,
// each in FILE with every "{point}" replaced by its index. Both backends' `run` and validate-sim
// name their timelines this way.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace tessera::app {

struct TraceFiles {
  std::string pattern;    // "" for no trace
  std::size_t point = 0;  // the traced point, when the pattern names one file

  bool every_point() const { return pattern.find("{point}") != std::string::npos; }
  bool traces(std::size_t index) const {
    return !pattern.empty() && (every_point() || index == point);
  }
  std::string path(std::size_t index) const {
    std::string file = pattern;
    const std::string number = std::to_string(index);
    for (auto at = file.find("{point}"); at != std::string::npos;
         at = file.find("{point}", at + number.size())) {
      file.replace(at, 7, number);
    }
    return file;
  }
};

// The point `--trace FILE` traces: --trace-point when given (>= 0), else the last of `selected`
// (--points), else the sweep's last.
inline std::size_t traced_point(std::int64_t trace_point, const std::vector<std::size_t>& selected,
                                std::size_t points) {
  if (trace_point >= 0) return static_cast<std::size_t>(trace_point);
  if (!selected.empty()) return *std::max_element(selected.begin(), selected.end());
  return points == 0 ? 0 : points - 1;
}

// The line `run` ends with when --trace was given: the `kind` timelines it wrote (`written`: their
// points), or that it wrote none and `why_none`.
inline std::string trace_report(const TraceFiles& traces, const std::set<std::size_t>& written,
                                const std::string& kind, const std::string& why_none) {
  if (traces.pattern.empty()) return "";
  if (written.empty()) return "\nno " + kind + " timeline written: " + why_none;
  if (traces.every_point()) {
    return "\n" + kind + " timelines of " + std::to_string(written.size()) +
           " point(s): " + traces.pattern + " (open in ui.perfetto.dev)";
  }
  return "\n" + kind + " timeline of point " + std::to_string(traces.point) + ": " +
         traces.path(traces.point) + " (open in ui.perfetto.dev)";
}

}  // namespace tessera::app
