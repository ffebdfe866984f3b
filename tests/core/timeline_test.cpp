// A step's memory timeline: the peak and the time average of what is in use, each sample with
// what every use holds where every change said, and the trace's counters of both.
#include "tessera/core/result/timeline.hpp"

#include <gtest/gtest.h>

namespace tessera {
namespace {

MemoryTimeline two_uses() {
  MemoryTimeline timeline;
  timeline.change(0, 100, MemoryUse::weights);
  timeline.change(1, 300, MemoryUse::activations);
  timeline.change(3, -300, MemoryUse::activations);
  timeline.finish(4);
  return timeline;
}

TEST(MemoryTimeline, PeakAndTimeAverage) {
  const auto timeline = two_uses();
  EXPECT_DOUBLE_EQ(timeline.peak_bytes(), 400);
  EXPECT_DOUBLE_EQ(timeline.average_bytes(), (100 * 1 + 400 * 2 + 100 * 1) / 4.0);
}

TEST(MemoryTimeline, SamplesSayWhatEachUseHoldsAndAddUp) {
  const auto samples = two_uses().samples(7);
  ASSERT_EQ(samples.size(), 3u);
  for (const auto& sample : samples) {
    EXPECT_EQ(sample.gpu, 7);
    ASSERT_TRUE(sample.bytes_by_use.has_value());
    double sum = 0;
    for (double bytes : *sample.bytes_by_use) sum += bytes;
    EXPECT_DOUBLE_EQ(sum, sample.bytes) << sample.seconds;
  }
  const auto& at_one = *samples[1].bytes_by_use;
  EXPECT_DOUBLE_EQ(at_one[static_cast<std::size_t>(MemoryUse::activations)], 300);
  EXPECT_DOUBLE_EQ(at_one[static_cast<std::size_t>(MemoryUse::weights)], 100);
}

TEST(MemoryTimeline, OneChangeOfUnknownUseLeavesTheTotalAlone) {
  MemoryTimeline timeline;
  timeline.change(0, 100);  // e.g. what the real backend holds for the whole run
  timeline.change(1, 50, MemoryUse::activations);
  for (const auto& sample : timeline.samples(0)) EXPECT_FALSE(sample.bytes_by_use.has_value());
  EXPECT_DOUBLE_EQ(timeline.samples(0).back().bytes, 150);
}

TEST(ChromeTrace, MemoryCountersTheTotalAndByUse) {
  const auto trace = chrome_trace({}, "s", 0, "sim", two_uses().samples(0));
  int totals = 0, by_use = 0;
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] != "C") continue;
    if (event["name"] == "device memory in use") ++totals;
    if (event["name"] == "device memory by use") {
      ++by_use;
      EXPECT_EQ(event["args"].size(), static_cast<std::size_t>(kMemoryUses));
      EXPECT_DOUBLE_EQ(event["args"]["weights"].get<double>(), 100);
    }
  }
  EXPECT_EQ(totals, 3);
  EXPECT_EQ(by_use, 3);
}

}  // namespace
}  // namespace tessera
