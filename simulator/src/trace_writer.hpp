#pragma once
// Chrome trace-event JSON (opens in ui.perfetto.dev and chrome://tracing): one process per traced
// GPU, one thread per stream (compute, communication, input reads), times in microseconds.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "play/step_player.hpp"

namespace tessera::sim {

nlohmann::json chrome_trace(const std::vector<TimelineEvent>& events, const std::string& scenario,
                            std::size_t point);

}  // namespace tessera::sim
