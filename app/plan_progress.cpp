#include "plan_progress.hpp"

#include <cmath>
#include <sstream>

#include "tessera/core/plan_search/plan_explain.hpp"

namespace tessera::app {
namespace {

// A terminal redraws the line at most this often, a log writes one line this often.
constexpr double kTerminalSeconds = 0.2;
constexpr double kLogSeconds = 5;

std::string whole_seconds(double seconds) {
  return std::to_string(static_cast<long long>(std::lround(std::max(0.0, seconds)))) + " s";
}

}  // namespace

PlanProgress::PlanProgress(std::ostream& out, bool terminal, Clock::time_point start,
                           std::size_t candidates, double budget_seconds, PlanObjective objective)
    : out_(out),
      terminal_(terminal),
      candidates_(candidates),
      budget_seconds_(budget_seconds),
      objective_(objective),
      start_(start) {}

std::string PlanProgress::line() const {
  const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
  std::ostringstream text;
  text << "plan: " << decided_ << "/" << candidates_ << " candidates decided, " << simulated_
       << " simulated, best " << best_ << ", " << whole_seconds(elapsed) << " elapsed";
  if (budget_seconds_ > 0) text << ", " << whole_seconds(budget_seconds_ - elapsed) << " left";
  return text.str();
}

void PlanProgress::show(bool always) {
  const auto now = Clock::now();
  const double since = std::chrono::duration<double>(now - last_shown_).count();
  if (!always && since < (terminal_ ? kTerminalSeconds : kLogSeconds)) return;
  last_shown_ = now;
  auto text = line();
  if (!terminal_ && text == last_line_) return;  // a log gets no repeated line
  if (terminal_) {
    out_ << "\r" << text << "\x1b[K" << std::flush;
  } else {
    out_ << text << "\n" << std::flush;
  }
  last_line_ = std::move(text);
}

void PlanProgress::screened(double seconds) {
  screening_seconds_ = seconds;
  std::ostringstream text;
  text << "plan: " << candidates_ << " candidates screened in " << whole_seconds(seconds)
       << "; simulating the ones that may be best";
  out_ << text.str() << "\n" << std::flush;
  last_shown_ = Clock::now();
}

void PlanProgress::wave_finished(const PlanSearchResult& so_far) {
  decided_ = 0;
  for (const auto& outcome : so_far.outcomes) decided_ += outcome.decided() ? 1 : 0;
  simulated_ = so_far.simulated;
  if (!so_far.ranking.empty()) {
    best_ = format_objective(so_far.outcomes[so_far.ranking.front()].score, objective_);
  }
  if (!warned_ && budget_seconds_ <= 0) {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    const auto warning =
        long_search_warning(candidates_ - decided_, so_far.simulated, elapsed - screening_seconds_);
    if (!warning.empty()) {
      out_ << (terminal_ ? "\r\x1b[K" : "") << warning << "\n" << std::flush;
      warned_ = true;
    }
  }
  show(false);
}

void PlanProgress::simulation_finished() {
  ++simulated_;
  show(false);
}

void PlanProgress::end() {
  show(true);
  if (terminal_) out_ << "\n" << std::flush;
}

}  // namespace tessera::app
