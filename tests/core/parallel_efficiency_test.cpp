// Parallel efficiency of a sweep's rows against its baseline, as the run table prints it and
// analysis/scaling_efficiency.py computes it.
#include <gtest/gtest.h>

#include <vector>

#include "tessera/core/result/sweep_runner.hpp"

namespace tessera {
namespace {

PointResult row(std::int64_t gpus, double step_seconds, PointStatus status = PointStatus::ok) {
  PointResult p;
  p.gpus = gpus;
  p.step_seconds = step_seconds;
  p.status = status;
  return p;
}

TEST(ParallelEfficiency, WeakAndStrongAgainstTheFirstPoint) {
  const std::vector<PointResult> points{row(1, 1.0), row(2, 1.25), row(4, 2.0)};
  EXPECT_EQ(parallel_efficiency(points, Scaling::weak), (std::vector<double>{1.0, 0.8, 0.5}));
  const auto strong =
      parallel_efficiency({row(1, 1.0), row(2, 0.625), row(4, 0.5)}, Scaling::strong);
  EXPECT_EQ(strong, (std::vector<double>{1.0, 0.8, 0.5}));
}

// gpus: [4, 2, 1] printed 109% and 114%, measured against the first point listed.
TEST(ParallelEfficiency, TheBaselineIsTheFewestGpusWhateverTheOrder) {
  const auto efficiency =
      parallel_efficiency({row(4, 2.0), row(2, 1.25), row(1, 1.0)}, Scaling::weak);
  EXPECT_EQ(efficiency, (std::vector<double>{0.5, 0.8, 1.0}));
}

TEST(ParallelEfficiency, APointWithoutAStepIsZeroAndAnOkPointIsPreferredAsBaseline) {
  const auto efficiency =
      parallel_efficiency({row(1, 0.0, PointStatus::failed), row(2, 4.0, PointStatus::does_not_fit),
                           row(4, 1.0), row(8, 2.0)},
                          Scaling::weak);
  EXPECT_EQ(efficiency, (std::vector<double>{0.0, 0.25, 1.0, 0.5}));
  EXPECT_TRUE(parallel_efficiency({}, Scaling::weak).empty());
}

}  // namespace
}  // namespace tessera
