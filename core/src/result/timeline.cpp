#include "tessera/core/timeline.hpp"

#include <set>

namespace tessera {

nlohmann::json chrome_trace(const std::vector<TimelineEvent>& events, const std::string& scenario,
                            std::size_t point, const std::string& backend) {
  static const char* const tracks[] = {"compute", "communication", "input reads"};
  const std::string unit = backend == "real" ? "rank " : "GPU ";
  nlohmann::json trace_events = nlohmann::json::array();
  std::set<int> gpus;
  for (const auto& event : events) gpus.insert(event.gpu);
  for (int gpu : gpus) {
    trace_events.push_back({{"ph", "M"},
                            {"name", "process_name"},
                            {"pid", gpu},
                            {"tid", 0},
                            {"args", {{"name", unit + std::to_string(gpu)}}}});
    for (int track = 0; track < 3; ++track) {
      trace_events.push_back({{"ph", "M"},
                              {"name", "thread_name"},
                              {"pid", gpu},
                              {"tid", track},
                              {"args", {{"name", tracks[track]}}}});
    }
  }
  for (const auto& event : events) {
    trace_events.push_back({{"ph", "X"},
                            {"name", event.name},
                            {"cat", to_string(event.category)},
                            {"pid", event.gpu},
                            {"tid", static_cast<int>(event.track)},
                            {"ts", event.start_seconds * 1e6},
                            {"dur", (event.end_seconds - event.start_seconds) * 1e6},
                            {"args", {{"source", to_string(event.source)}}}});
  }
  return {{"traceEvents", trace_events},
          {"displayTimeUnit", "ms"},
          {"otherData", {{"scenario", scenario}, {"point", point}, {"backend", backend}}}};
}

}  // namespace tessera
