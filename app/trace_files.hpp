#pragma once
// Which points `--trace FILE` traces, and where: FILE for one point (--trace-point, default the
// last), or, when FILE contains "{point}", every point, each in FILE with "{point}" replaced by
// its index. Both backends' `run` and validate-sim name their timelines this way.
#include <cstddef>
#include <string>

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
    if (const auto at = file.find("{point}"); at != std::string::npos) {
      file.replace(at, 7, std::to_string(index));
    }
    return file;
  }
};

}  // namespace tessera::app
