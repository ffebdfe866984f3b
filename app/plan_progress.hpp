#pragma once
// The progress line of `tessera plan` on standard error: candidates decided, simulations done,
// the best so far, the time spent and, under a budget, the time left. A terminal shows it in
// place, updated as each simulation ends; a log (not a terminal) gets it as a line every few
// seconds, so that a long search never looks hung. A search without a budget that may run long
// says so once (long_search_warning).
#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>

#include "tessera/core/plan_search/plan_search.hpp"

namespace tessera::app {

class PlanProgress {
 public:
  // `start`: when the command started, from which the budget counts.
  PlanProgress(std::ostream& out, bool terminal, std::chrono::steady_clock::time_point start,
               std::size_t candidates, double budget_seconds, PlanObjective objective);

  void screened(double seconds);                       // once, before the first wave
  void wave_finished(const PlanSearchResult& so_far);  // the search's counts and best
  void simulation_finished();                          // one more this wave
  void end();                                          // the last line, kept on screen

  // The line as shown, e.g. "plan: 120/3282 candidates decided, 24 simulated, best ...".
  std::string line() const;

 private:
  using Clock = std::chrono::steady_clock;
  void show(bool always);

  std::ostream& out_;
  bool terminal_;
  std::size_t candidates_;
  double budget_seconds_;
  PlanObjective objective_;
  Clock::time_point start_;
  Clock::time_point last_shown_{};
  std::size_t decided_ = 0;
  std::size_t simulated_ = 0;  // by the waves finished, and this wave's so far
  std::string best_ = "-";
  double screening_seconds_ = 0;
  bool warned_ = false;  // that the search may run long (once)
  std::string last_line_;
};

}  // namespace tessera::app
