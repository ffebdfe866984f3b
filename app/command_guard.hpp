#pragma once
// Runs a command and turns every failure into a clear message and an exit code: bad input (file,
// line, key, expectation) exits 2, anything else 1. No raw library exception reaches the user.
#include <functional>

namespace tessera::app {

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitBadInput = 2;

int run_guarded(const std::function<int()>& command);

}  // namespace tessera::app
