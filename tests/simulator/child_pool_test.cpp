// The children that play a plan's wave: outcomes in order, one call per finished child, and a
// deadline that stops those still running and starts no more.
#include "process/child_pool.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>

namespace tessera::sim {
namespace {

std::function<nlohmann::json()> answer(int value, unsigned sleep_seconds = 0) {
  return [value, sleep_seconds] {
    if (sleep_seconds > 0) ::sleep(sleep_seconds);
    return nlohmann::json{{"value", value}};
  };
}

TEST(ChildPool, OutcomesComeInTheOrderOfTheWorkAndEachFinishIsHeard) {
  int finished = 0;
  const auto outcomes =
      run_in_children({answer(1), answer(2), answer(3)}, 2, {.on_finished = [&] { ++finished; }});
  ASSERT_EQ(outcomes.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(outcomes[i].message);
    EXPECT_EQ((*outcomes[i].message)["value"], i + 1);
    EXPECT_FALSE(outcomes[i].cut_off);
  }
  EXPECT_EQ(finished, 3);
}

TEST(ChildPool, ADeadlineStopsRunningChildrenAndStartsNoMore) {
  const auto start = std::chrono::steady_clock::now();
  // The second child would sleep a minute; the third never starts (one job at a time).
  const auto outcomes =
      run_in_children({answer(1), answer(2, 60), answer(3)}, 1,
                      {.deadline = start + std::chrono::milliseconds(500), .on_finished = {}});
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(outcomes.size(), 3u);
  ASSERT_TRUE(outcomes[0].message);
  EXPECT_FALSE(outcomes[0].cut_off);
  EXPECT_TRUE(outcomes[1].cut_off);
  EXPECT_FALSE(outcomes[1].message);
  EXPECT_TRUE(outcomes[2].cut_off);
  EXPECT_FALSE(outcomes[2].message);
  EXPECT_LT(waited, 30) << "the sleeping child was not stopped at the deadline";
}

TEST(ChildPool, APassedDeadlineStartsNothing) {
  const auto outcomes =
      run_in_children({answer(1)}, 1, {.deadline = std::chrono::steady_clock::now()});
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_TRUE(outcomes[0].cut_off);
}

}  // namespace
}  // namespace tessera::sim
