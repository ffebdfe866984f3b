#pragma once
// Work that must run in a fresh process: SimGrid allows one engine per process, and a malformed
// platform file can make it abort instead of throwing. The child sends its answer back as JSON.
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace tessera::sim {

struct ChildOutcome {
  std::optional<nlohmann::json> message;  // what `work` returned; none if the child died first
  int signal = 0;                         // the signal that ended the child, if one did
  int exit_code = 0;
  std::string captured_stderr;  // with capture_stderr: what the child wrote there
  bool cut_off = false;         // stopped, or never started, because a deadline passed
};

// "crashed (signal 6: aborted; ...)": what a child's ending signal says of its cause, for the
// error of a simulation that ended so.
std::string crash_text(int signal);

// Forks, runs `work` in the child and returns its JSON. An exception in `work` becomes
// {"error": what()}. With `capture_stderr`, the child's standard error (SimGrid's own messages)
// is collected instead of reaching the terminal.
ChildOutcome run_in_child(const std::function<nlohmann::json()>& work, bool capture_stderr);

// In a forked child: runs `work`, writes its JSON (or {"error": what()}) to `message_fd` and
// exits, 0 or 1 for an exception. Shared by the single child above and the pool.
[[noreturn]] void finish_child(int message_fd, const std::function<nlohmann::json()>& work);

}  // namespace tessera::sim
