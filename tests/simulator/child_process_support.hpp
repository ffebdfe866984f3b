#pragma once
// Simulations in death-test children, for tests that build SimGrid platforms: SimGrid allows one
// Engine per process, so each test's checks run in a child ("threadsafe": re-executed from a
// fresh exec, inheriting no SimGrid state) that exits 0 when they all pass.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <simgrid/s4u/Engine.hpp>

namespace tessera::sim::test {

// Sets the death-test style in a global environment, after gtest has initialised its flags (a
// static initialiser would race gtest's own and leak).
class ThreadsafeDeathTests : public ::testing::Environment {
 public:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};
[[maybe_unused]] inline ::testing::Environment* const kThreadsafeDeathTests =
    ::testing::AddGlobalTestEnvironment(new ThreadsafeDeathTests);

// In a child process: writes the current test's failures to stderr, which the parent shows.
[[noreturn]] inline void exit_with_result() {
  const auto* result = ::testing::UnitTest::GetInstance()->current_test_info()->result();
  for (int i = 0; i < result->total_part_count(); ++i) {
    const auto& part = result->GetTestPartResult(i);
    if (part.failed()) {
      std::fprintf(stderr, "%s:%d: %s\n", part.file_name() ? part.file_name() : "?",
                   part.line_number(), part.message());
    }
  }
  std::fflush(nullptr);
  std::_Exit(result->Failed() ? 1 : 0);
}

// Runs `body` in a child process; the test passes when the child's checks all pass.
template <typename Body>
void in_own_process(Body body) {
  EXPECT_EXIT(
      {
        body();
        exit_with_result();
      },
      ::testing::ExitedWithCode(0), "");
}

// The child's one engine, with the CM02 model and no cross-traffic so that a lone transfer takes
// latency + size / bandwidth.
inline simgrid::s4u::Engine& cm02_engine() {
  static std::string name = "tessera_simulator_tests";
  static std::string log = "--log=root.thres:critical";
  static std::array<char*, 3> argv{name.data(), log.data(), nullptr};
  static int argc = 2;
  static simgrid::s4u::Engine instance(&argc, argv.data());
  static const bool configured = [] {
    simgrid::s4u::Engine::set_config("network/model:CM02");
    simgrid::s4u::Engine::set_config("network/crosstraffic:0");
    return true;
  }();
  (void)configured;
  return instance;
}

}  // namespace tessera::sim::test
