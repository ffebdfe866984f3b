// Ranks sharing a machine split its cores between their oneDNN teams; OMP_NUM_THREADS wins.
#include "tessera/kernels/cpu/cpu_threads.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>

namespace tessera::kernels {
namespace {

TEST(CpuThreads, EachRankGetsItsShareOfTheCoresUnlessOmpNumThreadsIsSet) {
  const char* before = std::getenv("OMP_NUM_THREADS");
  const std::string saved = before != nullptr ? before : "";
  const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));

  ::unsetenv("OMP_NUM_THREADS");
  EXPECT_EQ(share_cpu_cores(1).threads, cores);
  EXPECT_FALSE(share_cpu_cores(1).from_environment);
  EXPECT_EQ(share_cpu_cores(2 * cores).threads, 1);  // never fewer than one
  if (cores >= 2) {
    EXPECT_EQ(share_cpu_cores(2).threads, cores / 2);
  }

  ::setenv("OMP_NUM_THREADS", "1", 1);
  const auto forced = share_cpu_cores(1);
  EXPECT_TRUE(forced.from_environment);

  // Leave one thread, as the test environment asks, for the tests that follow.
  ::unsetenv("OMP_NUM_THREADS");
  share_cpu_cores(cores);
  if (before != nullptr) ::setenv("OMP_NUM_THREADS", saved.c_str(), 1);
}

}  // namespace
}  // namespace tessera::kernels
