// for_each_index_in_threads (parallel_indices.hpp): every index once, whatever the threads, and a
// worker's exception reaches the caller after every thread has stopped.
#include "tessera/core/common/parallel_indices.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

namespace tessera {
namespace {

TEST(ParallelIndices, EveryIndexOnceWithAnyNumberOfThreads) {
  for (std::size_t threads : {0u, 1u, 2u, 3u, 7u, 100u}) {
    for (std::size_t count : {0u, 1u, 5u, 64u}) {
      SCOPED_TRACE(std::to_string(threads) + " threads, " + std::to_string(count) + " indices");
      std::vector<std::atomic<int>> calls(count);
      for_each_index_in_threads(count, threads, [&](std::size_t i) { ++calls.at(i); });
      for (const auto& call : calls) EXPECT_EQ(call.load(), 1);
    }
  }
}

TEST(ParallelIndices, AWorkersExceptionReachesTheCaller) {
  std::atomic<int> done{0};
  try {
    for_each_index_in_threads(40, 4, [&](std::size_t i) {
      if (i == 5) throw std::runtime_error("index 5 failed");
      ++done;
    });
    FAIL() << "no exception";
  } catch (const std::runtime_error& error) {
    EXPECT_STREQ(error.what(), "index 5 failed");
  }
  // Index 5 is thread 1's second; the other threads ran all of theirs.
  EXPECT_EQ(done.load(), 30 + 1);
}

}  // namespace
}  // namespace tessera
