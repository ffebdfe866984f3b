// The passes a stage runs: every micro-batch forward and backward once, a micro-batch's forward
// before its backward, GPipe's all forwards first, one-forward-one-backward's warm-up of the
// later stages' depth.
#include "tessera/core/strategy/pipeline_schedule.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace tessera {
namespace {

void expect_each_micro_batch_once(const std::vector<PipelinePass>& passes, std::int64_t m) {
  ASSERT_EQ(passes.size(), static_cast<std::size_t>(2 * m));
  for (std::int64_t k = 0; k < m; ++k) {
    const auto forward = std::find(passes.begin(), passes.end(), PipelinePass{true, k});
    const auto backward = std::find(passes.begin(), passes.end(), PipelinePass{false, k});
    ASSERT_NE(forward, passes.end()) << k;
    ASSERT_NE(backward, passes.end()) << k;
    EXPECT_LT(forward, backward) << k;
  }
}

TEST(PipelineSchedule, GpipeRunsEveryForwardThenEveryBackwardLastFirst) {
  const auto passes = pipeline_passes(1, 4, 3, PipelineSchedule::gpipe);
  const std::vector<PipelinePass> expected{{true, 0},  {true, 1},  {true, 2},
                                           {false, 2}, {false, 1}, {false, 0}};
  EXPECT_EQ(passes, expected);
}

TEST(PipelineSchedule, OneForwardOneBackwardWarmsUpAsDeepAsTheStagesAfterIt) {
  // Stage 0 of 4 runs 3 forwards before its first backward; the last stage none.
  const std::vector<PipelinePass> first{{true, 0},  {true, 1},  {true, 2},  {true, 3},
                                        {false, 0}, {true, 4},  {false, 1}, {true, 5},
                                        {false, 2}, {false, 3}, {false, 4}, {false, 5}};
  EXPECT_EQ(pipeline_passes(0, 4, 6, PipelineSchedule::one_f_one_b), first);
  const std::vector<PipelinePass> last{{true, 0}, {false, 0}, {true, 1}, {false, 1},
                                       {true, 2}, {false, 2}, {true, 3}, {false, 3},
                                       {true, 4}, {false, 4}, {true, 5}, {false, 5}};
  EXPECT_EQ(pipeline_passes(3, 4, 6, PipelineSchedule::one_f_one_b), last);
  for (int stage = 0; stage < 4; ++stage) {
    for (std::int64_t m : {1, 2, 3, 8}) {
      expect_each_micro_batch_once(pipeline_passes(stage, 4, m, PipelineSchedule::one_f_one_b), m);
      expect_each_micro_batch_once(pipeline_passes(stage, 4, m, PipelineSchedule::gpipe), m);
    }
  }
}

TEST(PipelineSchedule, OneMicroBatchIsForwardThenBackward) {
  const std::vector<PipelinePass> plain{{true, 0}, {false, 0}};
  for (auto schedule : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b}) {
    EXPECT_EQ(pipeline_passes(0, 1, 1, schedule), plain);
    EXPECT_EQ(pipeline_passes(2, 3, 1, schedule), plain);
  }
}

}  // namespace
}  // namespace tessera
