// Time to train: steps to the target from a table (log-log interpolation, flagged extrapolation)
// or the critical-batch form, the time those steps take, the result fields, the zoo's published
// figures, and the scenario's training key.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/result/point_time_to_train.hpp"
#include "tessera/core/result/sweep_runner.hpp"
#include "test_support.hpp"

namespace tessera {
namespace {

using test::contains;

StatisticalEfficiency table(std::vector<StepsAtBatch> rows, double epoch_samples = 1e6) {
  StatisticalEfficiency e;
  e.target = TrainingTarget::table;
  e.table = std::move(rows);
  e.epoch_samples = epoch_samples;
  e.source = "test table";
  return e;
}

TEST(StepsToTarget, TableRowsAreExact) {
  const auto e = table({{256, 4000}, {1024, 1100}, {4096, 700}});
  for (const auto& row : e.table) {
    const auto at = steps_to_target(e, row.global_batch);
    EXPECT_DOUBLE_EQ(at.steps, row.steps);
    EXPECT_FALSE(at.extrapolated);
  }
}

TEST(StepsToTarget, BetweenRowsLinearInLogLog) {
  // 256 -> 1000 steps, 1024 -> 250 steps: slope -1 (perfect scaling), so 512 -> 500.
  const auto e = table({{256, 1000}, {1024, 250}, {4096, 200}});
  EXPECT_NEAR(steps_to_target(e, 512).steps, 500, 1e-9);
  // 1024 -> 250, 4096 -> 200: at 2048 the geometric mean, sqrt(250 x 200).
  EXPECT_NEAR(steps_to_target(e, 2048).steps, std::sqrt(250.0 * 200.0), 1e-9);
  EXPECT_FALSE(steps_to_target(e, 2048).extrapolated);
}

TEST(StepsToTarget, OutsideTheRowsTheNearestSegmentIsExtendedAndFlagged) {
  const auto e = table({{256, 1000}, {1024, 250}, {4096, 200}});
  const auto above = steps_to_target(e, 16384);
  EXPECT_TRUE(above.extrapolated);
  // The last segment's slope, log(200/250)/log(4): one more factor of 4 gives 200 x 0.8.
  EXPECT_NEAR(above.steps, 200 * 0.8, 1e-9);
  const auto below = steps_to_target(e, 64);
  EXPECT_TRUE(below.extrapolated);
  EXPECT_NEAR(below.steps, 4000, 1e-9);  // slope -1 extended down
}

TEST(StepsToTarget, EpochsAreStepsTimesBatchOverTheEpoch) {
  const auto e = table({{100, 5000}, {1000, 1000}}, 50'000);
  const auto at = steps_to_target(e, 1000);
  EXPECT_DOUBLE_EQ(at.epochs, 1000.0 * 1000 / 50'000);
}

TEST(StepsToTarget, CriticalBatchForm) {
  // McCandlish et al. 2018: S = S_min (1 + B_noise / B), E = E_min (1 + B / B_noise) in samples.
  StatisticalEfficiency e;
  e.target = TrainingTarget::critical_batch;
  e.critical_batch = 2000;
  e.min_steps = 300;
  e.epoch_samples = 1e6;
  for (std::int64_t batch : {1, 100, 2000, 50'000}) {
    SCOPED_TRACE(batch);
    const auto at = steps_to_target(e, batch);
    const double b = static_cast<double>(batch);
    EXPECT_DOUBLE_EQ(at.steps, 300 * (1 + 2000 / b));
    const double min_samples = 300.0 * 2000;  // E_min = S_min B_noise
    EXPECT_NEAR(at.epochs * 1e6, min_samples * (1 + b / 2000), 1e-6 * min_samples);
    EXPECT_FALSE(at.extrapolated);
  }
  // At the critical batch, twice the minimum steps and twice the minimum samples.
  EXPECT_DOUBLE_EQ(steps_to_target(e, 2000).steps, 600);
}

TEST(TimeToTrain, FirstEpochStepsAtTheirOwnTime) {
  const auto e = table({{100, 5000}, {1000, 1000}}, 50'000);  // 50 steps per epoch at 1000
  const auto at = steps_to_target(e, 1000);
  EXPECT_DOUBLE_EQ(time_to_train_seconds(at, e, 1000, 0.1, 0.4), 50 * 0.4 + 950 * 0.1);
  EXPECT_DOUBLE_EQ(time_to_train_seconds(at, e, 1000, 0.1, 0), 1000 * 0.1);
  // Fewer steps than an epoch: all of them in the first epoch.
  const auto short_run = StepsToTarget{.steps = 20, .epochs = 0.4};
  EXPECT_DOUBLE_EQ(time_to_train_seconds(short_run, e, 1000, 0.1, 0.4), 20 * 0.4);
}

PointResult ran_point(std::int64_t global_batch, double step_seconds) {
  PointResult p;
  p.global_batch = global_batch;
  p.step_seconds = step_seconds;
  p.first_epoch_step_seconds = step_seconds;
  p.note = "network CM02";
  return p;
}

TEST(FillTimeToTrain, OkPointsGetAllThree) {
  const auto e = table({{256, 1000}, {1024, 250}}, 1e6);
  auto p = ran_point(512, 0.2);
  fill_time_to_train(p, e);
  EXPECT_NEAR(p.steps_to_target, 500, 1e-9);
  EXPECT_NEAR(p.epochs, 500.0 * 512 / 1e6, 1e-12);
  EXPECT_NEAR(p.time_to_train_seconds, 500 * 0.2, 1e-9);
  EXPECT_EQ(p.note, "network CM02");  // inside the table: nothing to flag
}

TEST(FillTimeToTrain, PointsThatDidNotRunHaveNoTime) {
  const auto e = table({{256, 1000}, {1024, 250}}, 1e6);
  for (auto status : {PointStatus::skipped, PointStatus::failed, PointStatus::does_not_fit}) {
    auto p = ran_point(512, 0.2);
    p.status = status;
    fill_time_to_train(p, e);
    EXPECT_GT(p.steps_to_target, 0);  // a property of the batch, not of the run
    EXPECT_EQ(p.time_to_train_seconds, 0);
  }
}

TEST(FillTimeToTrain, ExtrapolationIsSaidOnceInTheNote) {
  const auto e = table({{256, 1000}, {1024, 250}}, 1e6);
  auto p = ran_point(4096, 0.2);
  fill_time_to_train(p, e);
  EXPECT_TRUE(contains(p.note,
                       "network CM02; time to train extrapolated: global batch 4096 lies "
                       "outside the steps-to-target table's 256..1024 (test table)"))
      << p.note;
  const auto once = p.note;
  fill_time_to_train(p, e);  // a resumed point is filled again
  EXPECT_EQ(p.note, once);
  fill_time_to_train(p, table({{256, 1000}, {8192, 100}}, 1e6));  // a table that covers it now
  EXPECT_EQ(p.note, "network CM02");
}

TEST(FillTimeToTrain, NoTargetLeavesZeros) {
  auto p = ran_point(512, 0.2);
  p.epochs = p.steps_to_target = p.time_to_train_seconds = 7;  // from an earlier fill
  fill_time_to_train(p, StatisticalEfficiency{});
  EXPECT_EQ(p.epochs, 0);
  EXPECT_EQ(p.steps_to_target, 0);
  EXPECT_EQ(p.time_to_train_seconds, 0);
}

// ---------------------------------------------------------------------------------------------
// The zoo's published figures and the training key

LoadedScenario load_time_to_train(const std::string& text) {
  return load_scenario_text(text, "time_to_train_test.yaml", "");
}

TEST(PublishedEfficiency, ResNet50FollowsGoyal2017) {
  const auto e = load_time_to_train("name: t\nmodel: {zoo: resnet50, mini_batch: 32}\n")
                     .statistical_efficiency;
  ASSERT_EQ(e.target, TrainingTarget::table);
  EXPECT_TRUE(contains(e.source, "Goyal et al. 2017")) << e.source;
  EXPECT_DOUBLE_EQ(e.epoch_samples, 1'281'167);
  // 90 epochs at every batch from 256 to 8k; beyond, flat and flagged.
  for (std::int64_t batch : {256, 1024, 8192, 32768}) {
    const auto at = steps_to_target(e, batch);
    EXPECT_NEAR(at.epochs, 90, 1e-9) << batch;
    EXPECT_EQ(at.extrapolated, batch > 8192) << batch;
  }
}

TEST(PublishedEfficiency, OnlyInThePublishedSetting) {
  // Other classes are another data set than ImageNet's: no figures.
  EXPECT_EQ(load_time_to_train(
                "name: t\nmodel: {zoo: resnet50, options: {classes: 10}, mini_batch: 32}\n")
                .statistical_efficiency.target,
            TrainingTarget::none);
  EXPECT_EQ(load_time_to_train("name: t\nmodel: {zoo: gnmt}\n").statistical_efficiency.target,
            TrainingTarget::none);
  EXPECT_EQ(load_time_to_train(
                "name: t\nmodel: {zoo: resnet50, mini_batch: 32}\ntraining: {target: none}\n")
                .statistical_efficiency.target,
            TrainingTarget::none);
}

TEST(TrainingKey, TableInEpochsAndStepsWithTheEpochFromIo) {
  const auto e = load_time_to_train(R"(name: t
model: {zoo: gnmt, options: {layers: 4}}
io: {samples: 4000000}
training:
  target: table
  source: made-up rows for this test
  steps_to_target:
    - {global_batch: 1000, epochs: 2}
    - {global_batch: 4000, steps: 3000}
)")
                     .statistical_efficiency;
  ASSERT_EQ(e.table.size(), 2u);
  EXPECT_DOUBLE_EQ(e.table[0].steps, 2 * 4'000'000 / 1000.0);
  EXPECT_DOUBLE_EQ(e.table[1].steps, 3000);
  EXPECT_EQ(e.source, "made-up rows for this test");
  EXPECT_TRUE(contains(describe_statistical_efficiency(e), "4,000,000 samples per epoch"));
}

TEST(TrainingKey, CriticalBatchWithMinimumEpochs) {
  const auto e = load_time_to_train(R"(name: t
model: {zoo: biglstm}
io: {samples: 1000000}
training: {target: critical_batch, critical_batch: 5000, min_epochs: 2}
)")
                     .statistical_efficiency;
  // E_min = 2 epochs = 2e6 samples = S_min x B_noise.
  EXPECT_DOUBLE_EQ(e.min_steps, 2e6 / 5000);
  EXPECT_NEAR(steps_to_target(e, 5000).epochs, 4, 1e-12);
}

TEST(TrainingKey, AResNet50TableTakesImageNetsEpoch) {
  const auto e = load_time_to_train(R"(name: t
model: {zoo: resnet50, mini_batch: 32}
training:
  target: table
  steps_to_target:
    - {global_batch: 1024, epochs: 80}
    - {global_batch: 32768, epochs: 100}
)")
                     .statistical_efficiency;
  EXPECT_DOUBLE_EQ(e.epoch_samples, 1'281'167);
  EXPECT_EQ(e.origin, "the scenario's training key");
}

// Both backends' results pass through the sweep runner, which fills the fields, also for points
// it keeps from an earlier run.
TEST(TimeToTrainInSweeps, FilledForNewAndKeptPoints) {
  namespace fs = std::filesystem;
  const fs::path directory = fs::temp_directory_path() / "tessera-time-to-train-sweep";
  fs::remove_all(directory);
  auto text = [](const std::string& epochs) {
    return R"(name: ttt
model: {zoo: resnet50, mini_batch: 256}
platform: {preset: v100_node}
sweep: {scaling: weak, gpus: [1, 2]}
training:
  target: table
  steps_to_target:
    - {global_batch: 256, epochs: )" +
           epochs + R"(}
    - {global_batch: 512, epochs: )" +
           epochs + R"(}
)";
  };
  int ran = 0;
  auto run = [&](const std::string& epochs) {
    const auto loaded = load_time_to_train(text(epochs));
    SweepRunOptions options{.backend = "sim", .output_directory = directory.string()};
    return run_sweep(loaded, options, [&](const SweepPoint& point) {
      ++ran;
      PointResult result;
      result.scenario = "ttt";
      result.point = static_cast<std::int64_t>(point.index);
      result.backend = "sim";
      result.gpus = point.config.gpus();
      result.data = point.config.data;
      result.spatial_grid = grid_to_string(point.config.spatial_grid);
      result.model_degree = point.config.model_degree;
      result.mini_batch = point.config.mini_batch;
      result.global_batch = point.config.global_batch();
      result.step_seconds = 0.25;
      return result;
    });
  };
  const auto first = run("90");
  ASSERT_EQ(first.points.size(), 2u);
  EXPECT_NEAR(first.points[1].epochs, 90, 1e-9);
  EXPECT_NEAR(first.points[1].steps_to_target, 90 * 1'281'167 / 512.0, 1e-6);
  EXPECT_NEAR(first.points[1].time_to_train_seconds, 0.25 * 90 * 1'281'167 / 512.0, 1e-6);
  // Another table: the points are kept (no simulation again), their time to train follows it.
  ran = 0;
  const auto second = run("45");
  EXPECT_EQ(ran, 0);
  EXPECT_EQ(second.resumed, 2u);
  EXPECT_NEAR(second.points[0].epochs, 45, 1e-9);
  std::ifstream json(directory / "sim.json");
  const auto document = nlohmann::json::parse(json);
  EXPECT_EQ(document.at("statistical_efficiency").at("target"), "table");
  EXPECT_NEAR(document.at("points").at(0).at("epochs").get<double>(), 45, 1e-9);
  fs::remove_all(directory);
}

}  // namespace
}  // namespace tessera
