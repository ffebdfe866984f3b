#pragma once
// Limits on a batch of simulations played in forked children (simulate_pool.hpp): a deadline,
// after which no more start and those running are stopped, and a hook that hears of each one
// finished (a search's progress line, say).
#include <chrono>
#include <functional>
#include <optional>

namespace tessera::sim {

struct RunLimits {
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::function<void()> on_finished;  // in the parent, after each child's outcome is in
};

}  // namespace tessera::sim
