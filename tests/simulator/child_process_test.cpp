// A simulation's child that ends by a signal: the signal is reported, and the error says what it
// suggests (SimGrid aborts where it runs out of memory).
#include "process/child_process.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>

namespace tessera::sim {
namespace {

TEST(ChildProcess, AnAbortedChildIsReportedWithItsSignalAndItsLikelyCause) {
  const auto outcome = run_in_child(
      []() -> nlohmann::json {
        std::signal(SIGABRT, SIG_DFL);
        std::abort();
      },
      true);
  EXPECT_FALSE(outcome.message);
  EXPECT_EQ(outcome.signal, SIGABRT);
  const auto text = crash_text(outcome.signal);
  EXPECT_EQ(text.rfind("crashed (signal 6: aborted", 0), 0u) << text;
  EXPECT_NE(text.find("out of host memory"), std::string::npos) << text;
}

TEST(ChildProcess, OtherSignalsAreNamed) {
  EXPECT_NE(crash_text(SIGKILL).find("killed"), std::string::npos);
  EXPECT_EQ(crash_text(SIGUSR1), "crashed (signal " + std::to_string(SIGUSR1) + ")");
}

}  // namespace
}  // namespace tessera::sim
