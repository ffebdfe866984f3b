// The default placement of model-parallel stages balances each layer's roofline time, forward
// and backward (stage_balance.hpp), not its forward FLOPs: the slowest stage is no slower, and
// scenarios without named stages get it.
#include "tessera/core/strategy/stage_balance.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "tessera/core/loading/scenario_loader.hpp"

namespace tessera {
namespace {

LoadedScenario resnet50_in_four_stages() {
  return load_scenario_text(R"(
name: stage-balance
model: {zoo: resnet50, mini_batch: 32}
parallelism: {model: {degree: 4, micro_batches: 4}}
platform: {preset: dgx1_v100}
)",
                            "stage_balance.yaml", "");
}

// The time of the slowest stage under `stages`.
double slowest_stage(const std::vector<int>& stages, const std::vector<double>& seconds) {
  std::vector<double> per_stage(4, 0.0);
  for (std::size_t i = 0; i < stages.size(); ++i) per_stage[stages[i]] += seconds[i];
  return *std::max_element(per_stage.begin(), per_stage.end());
}

TEST(StageBalance, TimedStagesAreNoSlowerThanFlopStagesAndScenariosGetThem) {
  const auto loaded = resnet50_in_four_stages();
  const auto& point = loaded.points.front();
  const auto timed = balanced_by_time({}, loaded.model, loaded.cluster.gpu, point.config,
                                      loaded.scenario.model.dtype);
  ASSERT_EQ(timed.layer_seconds.size(), loaded.model.layers().size());
  const auto by_time = assign_stages(loaded.model, 4, timed);
  const auto by_flops = assign_stages(loaded.model, 4, StagePlacement{});
  EXPECT_NE(by_time, by_flops);
  EXPECT_LT(slowest_stage(by_time, timed.layer_seconds),
            slowest_stage(by_flops, timed.layer_seconds));
  for (std::size_t i = 0; i < by_time.size(); ++i) {
    EXPECT_EQ(point.plan.layers[i].stage, by_time[i]) << loaded.model.layers()[i].layer.name;
  }
}

TEST(StageBalance, NamedStagesAndOneStageAreLeftAsTheyAre) {
  const auto loaded = resnet50_in_four_stages();
  auto config = loaded.points.front().config;
  const StagePlacement named{"layer2_0_conv1", "layer3_0_conv1", "layer4_0_conv1"};
  EXPECT_TRUE(balanced_by_time(named, loaded.model, loaded.cluster.gpu, config, DType::float32)
                  .layer_seconds.empty());
  config.model_degree = 1;
  EXPECT_TRUE(balanced_by_time({}, loaded.model, loaded.cluster.gpu, config, DType::float32)
                  .layer_seconds.empty());
}

}  // namespace
}  // namespace tessera
