#pragma once
// A step's timeline, as either backend records it: per GPU (or rank) three tracks (its compute
// stream, its communication stream, its input reads), each event a named span with the category
// of the step program's op and where its duration came from. chrome_trace() writes the Chrome
// trace-event JSON that ui.perfetto.dev and chrome://tracing open, so that a measured step and a
// simulated one can be looked at side by side.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/core/result_schema.hpp"
#include "tessera/core/step_program.hpp"

namespace tessera {

enum class TimelineTrack { compute = 0, communication = 1, input_reads = 2 };

struct TimelineEvent {
  int gpu = 0;
  TimelineTrack track = TimelineTrack::compute;
  std::string name;
  OpCategory category = OpCategory::compute;
  double start_seconds = 0;
  double end_seconds = 0;
  // Where the duration came from: simulated, measured, or a compute op's profile or roofline.
  Provenance source = Provenance::simulated;
};

// One process per GPU, one thread per track, times in microseconds; `backend` is "sim" or "real".
nlohmann::json chrome_trace(const std::vector<TimelineEvent>& events, const std::string& scenario,
                            std::size_t point, const std::string& backend);

}  // namespace tessera
