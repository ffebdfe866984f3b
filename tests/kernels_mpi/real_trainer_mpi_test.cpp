// The real backend's hybrid parallelism is exact: training CosmoFlow (width 16, and 32 in one
// case) for two steps on every rank
// of the run (data parallelism, depth partitions, both) gives the losses and weights of one rank
// training the same global batch alone, within float32 rounding. Every rank trains the
// one-rank reference itself (on a communicator of its own), then its share of the parallel run.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <ostream>

#include "../kernels/real_training_support.hpp"
#include "mpi_world.hpp"

namespace tessera::kernels {
namespace {

using testing::world;

struct TrainerCase {
  std::string name;
  std::int64_t data = 1;  // replicas (-1: one per rank); the depth split takes the other ranks
  std::int64_t mini_batch = 1;
  bool batch_norm = false;
  bool halve_micro_batches = false;  // the parallel run's kernels as two micro-batches each
  std::int64_t width = 16;
};

std::ostream& operator<<(std::ostream& out, const TrainerCase& c) {
  return out << c.name;
}

class RealTrainerOverMpi : public ::testing::TestWithParam<TrainerCase> {};

TEST_P(RealTrainerOverMpi, MatchesOneRankWithTheSameGlobalBatch) {
  const TrainerCase& c = GetParam();
  const std::int64_t data = c.data < 0 ? world().size() : c.data;
  if (data > 1 && data == world().size() && c.data > 0) {
    GTEST_SKIP() << "no ranks left for a depth split (the data-parallel case covers it)";
  }
  testing::TrainingCase parallel;
  parallel.batch_norm = c.batch_norm;
  parallel.halve_micro_batches = c.halve_micro_batches;
  parallel.width = c.width;
  parallel.config.data = data;
  parallel.config.mini_batch = c.mini_batch;
  parallel.config.spatial_grid = {world().size() / data, 1, 1};
  parallel.spatial_until = "pool2";  // 16^3: conv1..act2 split, 2 planes per shard at 4 ranks
  parallel.optimizer = Optimizer::momentum;  // linear in the gradients: rounding stays small
  parallel.steps = 2;                        // the second step starts from the first's momentum
  testing::TrainingCase alone = parallel;
  alone.halve_micro_batches = false;
  alone.config = {
      .data = 1, .spatial_grid = {1, 1, 1}, .mini_batch = parallel.config.global_batch()};

  auto own = world().split(world().rank(), 0);
  const auto reference = testing::train_cosmoflow(*own, alone);
  const auto run = testing::train_cosmoflow(world(), parallel);

  testing::expect_trains_like(run, reference, world().rank());
  // Every rank executed its step program's ops, in order: halo exchanges, batch-norm sums, the
  // redistribution and the gradient buckets where the program has them, and nothing else.
  EXPECT_EQ(run.last_step.executed, testing::expected_executions(run.program))
      << "rank " << world().rank();
  if (c.halve_micro_batches && world().size() / data > 1) {
    // The split layers' windows run two micro-batches each where the planned algorithm runs on
    // them, as the program says.
    std::size_t halved_windows = 0;
    for (const auto& op : run.program.ops) {
      for (const auto& window : op.window_plans) {
        EXPECT_NE(window.source, WindowPlanSource::unprofiled) << op.label;
        halved_windows += window.source == WindowPlanSource::follows_layer &&
                          window.plan.micro_batches.size() == 2;
      }
    }
    EXPECT_GT(halved_windows, 0u);
    // Every convolution problem ran as the program planned it; the reference, without a plan,
    // ran the library's choice.
    EXPECT_EQ(run.unplanned_convolutions, 0u) << "rank " << world().rank();
    EXPECT_GT(reference.unplanned_convolutions, 0u);
  }
}

// data_split: proportional in the real backend: replicas of unequal batches (3 and 1 samples in
// turn) train the global batch as one rank does: each trains its own samples of the step, its
// loss weighed by its share of the global batch.
TEST(RealTrainerUnequalBatches, MatchesOneRankWithTheSameGlobalBatch) {
  testing::TrainingCase parallel;
  parallel.config.data = world().size();
  parallel.config.mini_batch = 2;  // the nominal batch; the shares below replace it
  parallel.config.spatial_grid = {1, 1, 1};
  for (int replica = 0; replica < world().size(); ++replica) {
    parallel.replica_batches.push_back(replica % 2 == 0 ? 3 : 1);
  }
  parallel.optimizer = Optimizer::momentum;
  parallel.steps = 2;
  parallel.dataset_samples = 16;
  testing::TrainingCase alone = parallel;
  alone.replica_batches.clear();
  alone.config = {.data = 1, .spatial_grid = {1, 1, 1}, .mini_batch = 2 * world().size()};

  auto own = world().split(world().rank(), 0);
  const auto reference = testing::train_cosmoflow(*own, alone);
  const auto run = testing::train_cosmoflow(world(), parallel);

  testing::expect_trains_like(run, reference, world().rank());
}

INSTANTIATE_TEST_SUITE_P(
    CosmoFlow, RealTrainerOverMpi,
    ::testing::Values(
        TrainerCase{.name = "data parallel, one sample per rank", .data = -1},
        TrainerCase{.name = "depth split over every rank", .mini_batch = 2},
        TrainerCase{.name = "depth split with batch-norm (global statistics)",
                    .mini_batch = 2,
                    .batch_norm = true},
        TrainerCase{.name = "2 replicas x depth split", .data = 2},
        TrainerCase{.name = "depth split, split layers micro-batched on their windows",
                    .mini_batch = 2,
                    .halve_micro_batches = true},
        TrainerCase{.name = "CosmoFlow-32, depth split", .mini_batch = 2, .width = 32}),
    [](const ::testing::TestParamInfo<TrainerCase>& param) { return std::to_string(param.index); });

}  // namespace
}  // namespace tessera::kernels
