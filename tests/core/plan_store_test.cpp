// What `tessera plan` writes: the winner as a scenario file that loads back as the same strategy
// (best_scenario.hpp), and the candidates' rows, which a later run keeps when neither the
// strategy nor any input changed (plan_store.hpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tessera/core/plan_search/best_scenario.hpp"
#include "tessera/core/plan_search/plan_screen.hpp"
#include "tessera/core/plan_search/plan_store.hpp"
#include "test_support.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;

const char* const kScenario = R"(# a comment the written file does not keep
name: plan-store
model: {zoo: cosmoflow, options: {width: 128}, mini_batch: 1}
parallelism: {data: 4, spatial: {grid: [2, 1, 1], until: pool3}, gpus: 8}
memory: {offload: none}
platform: {preset: lassen}
sweep: {scaling: strong, grow: data, gpus: [4, 8]}
outputs: {trace_gpus: [0, 7]}
)";

fs::path fresh_directory(const std::string& name) {
  const auto directory = fs::temp_directory_path() / ("tessera-plan-store-" + name);
  fs::remove_all(directory);
  fs::create_directories(directory);
  return directory;
}

TEST(BestScenario, LoadsBackAsTheStrategy) {
  const auto loaded = load_scenario_text(kScenario, "plan.yaml", "");
  PlanStrategy strategy = scenario_strategy(loaded, 0);
  strategy.data = 2;
  strategy.mini_batch = 2;
  strategy.spatial_grid = {1, 2, 2};
  strategy.spatial_until = "pool2";
  strategy.model_degree = 2;
  strategy.micro_batches = 2;
  strategy.schedule = PipelineSchedule::one_f_one_b;
  strategy.offload = OffloadPolicy::dyn;
  strategy.workspace_limit_bytes = 16.0 * 1024 * 1024;
  const auto directory = fresh_directory("best");
  const auto text =
      best_scenario_yaml({kScenario, "", "", 12.0 * 1024 * 1024 * 1024}, strategy,
                         directory.string(), "plan-store-plan", "found by a test\nsecond line");
  EXPECT_TRUE(test::contains(text, "# found by a test\n# second line\n")) << text;
  EXPECT_FALSE(test::contains(text, "sweep")) << text;
  const auto path = directory / "best.yaml";
  std::ofstream(path) << text;
  const auto reread = load_scenario(path.string());
  EXPECT_EQ(reread.scenario.name, "plan-store-plan");
  ASSERT_EQ(reread.points.size(), 1u);
  EXPECT_EQ(scenario_strategy(reread, 0), strategy);
  EXPECT_TRUE(test::contains(text, "micro_batches: 2")) << text;
  EXPECT_TRUE(test::contains(text, "schedule: 1f1b")) << text;
  EXPECT_DOUBLE_EQ(reread.device_capacity_bytes, 12.0 * 1024 * 1024 * 1024);

  // An explicit placement comes back as written.
  strategy.placement = {{"conv3", 1}};
  strategy.schedule = PipelineSchedule::gpipe;
  std::ofstream(path) << best_scenario_yaml({kScenario, "", "", {}}, strategy, directory.string(),
                                            "plan-store-placed", "");
  EXPECT_EQ(scenario_strategy(load_scenario(path.string()), 0), strategy);
}

// A split proportional to GPU speed admits no spatial or model section: best.yaml has none.
TEST(BestScenario, AProportionalSplitWritesPureDataParallelism) {
  const std::string text = R"(
name: proportional
model: {zoo: resnet18, mini_batch: 64}
parallelism: {data: 16, data_split: proportional}
platform: {preset: v100_p100_mixed}
)";
  const auto loaded = load_scenario_text(text, "plan.yaml", "");
  PlanStrategy strategy = scenario_strategy(loaded, 0);
  strategy.data = 32;
  const auto directory = fresh_directory("proportional");
  const auto written =
      best_scenario_yaml({text, "", "", {}}, strategy, directory.string(), "proportional-plan", "");
  EXPECT_FALSE(test::contains(written, "spatial")) << written;
  EXPECT_FALSE(test::contains(written, "degree")) << written;
  std::ofstream(directory / "best.yaml") << written;
  EXPECT_EQ(scenario_strategy(load_scenario((directory / "best.yaml").string()), 0), strategy);
}

TEST(BestScenario, FilesItNamesStayFoundFromWhereItIsWritten) {
  const auto directory = fresh_directory("paths");
  fs::create_directories(directory / "scenarios" / "models");
  fs::copy_file(fs::path(TESSERA_SOURCE_DIR) / "scenarios/models/tiny_resnet.yaml",
                directory / "scenarios" / "models" / "tiny_resnet.yaml");
  const std::string text = R"(
name: custom
model: {file: models/tiny_resnet.yaml, mini_batch: 4}
platform: {preset: lassen}
)";
  std::ofstream(directory / "scenarios" / "custom.yaml") << text;
  const auto loaded = load_scenario((directory / "scenarios" / "custom.yaml").string());
  const auto output = directory / "results" / "plan";
  fs::create_directories(output);
  const auto written =
      best_scenario_yaml({text, (directory / "scenarios").string(), "", {}},
                         scenario_strategy(loaded, 0), output.string(), "custom-plan", "");
  std::ofstream(output / "best.yaml") << written;
  EXPECT_TRUE(test::contains(written, "../../scenarios/models/tiny_resnet.yaml")) << written;
  EXPECT_EQ(scenario_strategy(load_scenario((output / "best.yaml").string()), 0),
            scenario_strategy(loaded, 0));
}

TEST(PlanStore, KeepsRowsWhoseStrategyAndInputsAreUnchanged) {
  const auto loaded = load_scenario_text(kScenario, "plan.yaml", "");
  const auto directory = fresh_directory("resume");
  const auto files = plan_files(directory.string());
  PlanSearchOptions options;
  options.scenario_name = "plan-store";
  options.inputs = {{"scenario", "a"}, {"model", "b"}, {"version", "1"}};
  PlanSearchResult search;
  search.outcomes.resize(2);
  for (std::size_t i = 0; i < 2; ++i) {
    auto& outcome = search.outcomes[i];
    outcome.screened.candidate = {i, scenario_strategy(loaded, 0)};
    outcome.screened.candidate.strategy.data = static_cast<std::int64_t>(i + 1);
    outcome.screened.valid = outcome.screened.fits = true;
    outcome.status = CandidateStatus::evaluated;
    outcome.result.backend = "sim";
    outcome.result.step_seconds = 0.5 + static_cast<double>(i);
    outcome.result = candidate_row(outcome, options);
  }
  RunResult document;
  document.scenario = "plan-store";
  document.backend = "sim";
  write_plan_results(files, document, search);
  ASSERT_TRUE(fs::exists(files.csv_path));

  const StoredPlanResults same(files.json_path, options.inputs);
  EXPECT_EQ(same.size(), 2u);
  const auto* kept = same.find(search.outcomes[1].screened.candidate);
  ASSERT_NE(kept, nullptr);
  EXPECT_DOUBLE_EQ(kept->step_seconds, 1.5);
  auto other = search.outcomes[1].screened.candidate;
  other.strategy.spatial_until = "pool1";
  EXPECT_EQ(same.find(other), nullptr);

  auto changed = options.inputs;
  changed["version"] = "2";
  EXPECT_EQ(StoredPlanResults(files.json_path, changed).size(), 0u);
}

}  // namespace
}  // namespace tessera
