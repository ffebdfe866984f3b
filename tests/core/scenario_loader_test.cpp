// Scenario loading end to end: the bad-scenario corpus (every file rejected with file, line and the
// key its "# expect-key:" comment names), the shipped and good scenarios (all load), the wording of
// the most common errors and the built-in default (sweep expansion: sweep_expansion_test.cpp;
// model files: model_file_test.cpp).
#include <gtest/gtest.h>

#include "test_files.hpp"
#include "test_support.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/core/common/input_error.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/model/model_file.hpp"

namespace tessera {
namespace {

using test::contains;
using test::find_in_file;
using test::input_error;
using test::layer_index;
using test::lines_of;
using test::read_text;

namespace fs = std::filesystem;

const std::string kDataDir = TESSERA_TEST_DATA_DIR;
const std::string kSourceDir = TESSERA_SOURCE_DIR;
const std::string kBadDir = kDataDir + "/scenarios/bad";
const std::string kGoodDir = kDataDir + "/scenarios/good";
const std::string kModelDir = kDataDir + "/models";

// The *.yaml files directly in `directory`, sorted, as "<directory>/<name>".
std::vector<std::string> yaml_files(const std::string& directory) {
  std::vector<std::string> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(directory, error)) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") {
      files.push_back(directory + "/" + entry.path().filename().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The value of the file's "# expect-key:" comment, if it has one.
std::optional<std::string> expected_key(const std::string& path) {
  const std::string marker = "# expect-key:";
  for (const auto& line : lines_of(path)) {
    if (line.rfind(marker, 0) != 0) continue;
    std::string key = line.substr(marker.size());
    key.erase(0, key.find_first_not_of(" \t"));
    key.erase(key.find_last_not_of(" \t\r") + 1);
    return key;
  }
  return std::nullopt;
}

std::string stem(const std::string& path) {
  return fs::path(path).stem().string();
}

// Runs `load` and returns the InputError it throws; anything else fails the test.
InputError scenario_error(const std::string& path) {
  return input_error([&] { (void)load_scenario(path); });
}

InputError bad_scenario_error(const std::string& name) {
  return scenario_error(kBadDir + "/" + name + ".yaml");
}

// ---------------------------------------------------------------------------------------------
// The bad-scenario corpus

std::string file_test_name(const testing::TestParamInfo<std::string>& info) {
  std::string name = stem(info.param);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

TEST(BadScenarioCorpus, HasAtLeast36Files) {
  EXPECT_GE(yaml_files(kBadDir).size(), 36u);
}

class BadScenario : public testing::TestWithParam<std::string> {};

TEST_P(BadScenario, IsRejectedWithFileLineAndKey) {
  const std::string& path = GetParam();
  const InputError error = scenario_error(path);
  const auto lines = lines_of(path);

  EXPECT_EQ(error.where().file, path) << error.what();
  EXPECT_GT(error.where().line, 0) << error.what();
  EXPECT_LE(error.where().line, std::max<int>(1, static_cast<int>(lines.size()))) << error.what();
  EXPECT_GT(error.where().column, 0) << error.what();
  if (const auto key = expected_key(path)) {
    EXPECT_EQ(error.key(), *key) << error.what();
  } else {
    EXPECT_EQ(error.key(), "") << error.what();
  }
  EXPECT_FALSE(error.problem().empty());
  // The one-line form the CLI prints: "file:line:column: key: problem".
  const std::string prefix = path + ":" + std::to_string(error.where().line) + ":" +
                             std::to_string(error.where().column) + ": ";
  EXPECT_EQ(std::string(error.what()).rfind(prefix, 0), 0u) << error.what();
  for (const char* raw : {"yaml-cpp", "std::", "basic_string", "bad_"}) {
    EXPECT_FALSE(contains(error.problem(), raw)) << error.what();
  }
}

TEST_P(BadScenario, TextLoaderReportsTheSameError) {
  const std::string& path = GetParam();
  const InputError from_file = scenario_error(path);
  const InputError from_text = input_error([&] {
    (void)load_scenario_text(read_text(path), path, fs::path(path).parent_path().string());
  });
  EXPECT_EQ(from_text.where().file, from_file.where().file);
  EXPECT_EQ(from_text.where().line, from_file.where().line);
  EXPECT_EQ(from_text.where().column, from_file.where().column);
  EXPECT_EQ(from_text.key(), from_file.key());
  EXPECT_EQ(from_text.problem(), from_file.problem());
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadScenario, testing::ValuesIn(yaml_files(kBadDir)),
                         file_test_name);

// ---------------------------------------------------------------------------------------------
// Scenarios that must load

TEST(GoodScenarioCorpus, HasShippedAndTestScenarios) {
  EXPECT_GE(yaml_files(kSourceDir + "/scenarios").size(), 9u);
  EXPECT_GE(yaml_files(kGoodDir).size(), 3u);
}

class ShippedScenario : public testing::TestWithParam<std::string> {};

TEST_P(ShippedScenario, Loads) {
  const auto loaded = load_scenario(GetParam());
  EXPECT_FALSE(loaded.points.empty());
  EXPECT_GT(loaded.device_capacity_bytes, 0);
  for (const auto& point : loaded.points) {
    EXPECT_LE(point.config.gpus(), loaded.cluster.total_gpus());
    EXPECT_EQ(point.plan.layers.size(), loaded.model.layers().size());
  }
}

INSTANTIATE_TEST_SUITE_P(Shipped, ShippedScenario,
                         testing::ValuesIn(yaml_files(kSourceDir + "/scenarios")), file_test_name);
INSTANTIATE_TEST_SUITE_P(Good, ShippedScenario, testing::ValuesIn(yaml_files(kGoodDir)),
                         file_test_name);

// ---------------------------------------------------------------------------------------------
// Wording and position of particular errors

TEST(ScenarioErrors, UnknownTopLevelKeySuggestsTheClosestAllowedKey) {
  const std::string path = kBadDir + "/unknown_top_level_key.yaml";
  const auto error = scenario_error(path);
  EXPECT_EQ(error.key(), "paralelism");
  EXPECT_TRUE(contains(error.problem(), "unknown key")) << error.problem();
  EXPECT_TRUE(contains(error.problem(), "did you mean 'parallelism'?")) << error.problem();
  const auto at = find_in_file(path, "paralelism:");
  EXPECT_EQ(error.where().line, at.line);
  EXPECT_EQ(error.where().column, 1);
}

TEST(ScenarioErrors, MisspeltSectionKeySuggestsTheSectionsKey) {
  const auto error = bad_scenario_error("misspelt_section_key");
  EXPECT_TRUE(contains(error.problem(), "did you mean 'mini_batch'?")) << error.problem();
  EXPECT_TRUE(contains(error.problem(), "zoo, file, options, mini_batch")) << error.problem();
}

TEST(ScenarioErrors, GpusMismatchShowsTheProduct) {
  const std::string path = kBadDir + "/gpus_mismatch.yaml";
  const auto error = scenario_error(path);
  EXPECT_EQ(error.key(), "parallelism.gpus");
  EXPECT_TRUE(contains(error.problem(), "4 x 4 x 1 x 1 = 16")) << error.problem();
  EXPECT_TRUE(contains(error.problem(), "got 32")) << error.problem();
  // Points at the value 32 of "gpus: 32".
  const auto at = find_in_file(path, "gpus: 32");
  EXPECT_EQ(error.where().line, at.line);
  EXPECT_EQ(error.where().column, at.column + 6);
}

TEST(ScenarioErrors, HaloWiderThanSlabNamesLayerAndAxis) {
  const auto error = bad_scenario_error("halo_wider_than_slab");
  EXPECT_EQ(error.key(), "parallelism.spatial.grid");
  EXPECT_TRUE(contains(error.problem(), "layer 'conv1'")) << error.problem();
  EXPECT_TRUE(contains(error.problem(), "halo of 3 planes along H")) << error.problem();
  EXPECT_TRUE(contains(error.problem(), "local slab of 2 planes")) << error.problem();
}

TEST(ScenarioErrors, IndivisibleSplitNamesLayerExtentAndPartitions) {
  const auto error = bad_scenario_error("spatial_split_not_dividing");
  EXPECT_TRUE(contains(error.problem(), "D=128 is not divisible by 3")) << error.problem();
}

TEST(ScenarioErrors, UnknownChoiceSuggestsTheClosestName) {
  EXPECT_TRUE(
      contains(bad_scenario_error("unknown_offload_policy").problem(), "did you mean 'conv'?"));
  EXPECT_TRUE(contains(bad_scenario_error("unknown_preset").problem(), "did you mean 'lassen'?"));
  EXPECT_TRUE(
      contains(bad_scenario_error("unknown_zoo_model").problem(), "did you mean 'cosmoflow'?"));
  EXPECT_TRUE(contains(bad_scenario_error("dtype_unknown").problem(), "did you mean 'float32'?"));
}

TEST(ScenarioErrors, BadOptionValueListsTheAllowedValues) {
  const auto error = bad_scenario_error("bad_option_value");
  EXPECT_TRUE(contains(error.problem(), "16, 32, 64, 128, 256, 512")) << error.problem();
  EXPECT_TRUE(contains(error.problem(), "got '100'")) << error.problem();
}

TEST(ScenarioErrors, SweepErrorPointsAtTheOffendingValue) {
  const std::string path = kBadDir + "/sweep_not_multiple.yaml";
  const auto error = scenario_error(path);
  EXPECT_EQ(error.key(), "sweep.gpus[1]");
  EXPECT_TRUE(contains(error.problem(), "multiple of 4 GPUs")) << error.problem();
  const auto list = find_in_file(path, "gpus: [4, 6, 8]");
  EXPECT_EQ(error.where().line, list.line);
  EXPECT_EQ(error.where().column, list.column + static_cast<int>(std::string("gpus: [4, ").size()));
}

TEST(ScenarioErrors, StrongScalingBatchErrorNamesTheGlobalBatch) {
  const auto error = bad_scenario_error("sweep_strong_batch_not_divisible");
  EXPECT_TRUE(contains(error.problem(), "global mini-batch of 6 samples")) << error.problem();
  EXPECT_TRUE(contains(error.problem(), "4 data-parallel replicas")) << error.problem();
}

TEST(ScenarioErrors, DuplicateKeyPointsAtTheSecondOccurrence) {
  const std::string path = kBadDir + "/duplicate_key.yaml";
  const auto error = scenario_error(path);
  EXPECT_TRUE(contains(error.problem(), "more than once")) << error.problem();
  const auto second = find_in_file(path, "mini_batch: 2");
  EXPECT_EQ(error.where().line, second.line);
  EXPECT_EQ(error.where().column, second.column);
}

TEST(ScenarioErrors, YamlSyntaxErrorIsReportedWithoutLibraryNames) {
  const auto error = bad_scenario_error("yaml_syntax_error");
  EXPECT_EQ(error.problem().rfind("not valid YAML", 0), 0u) << error.problem();
  EXPECT_GE(error.where().line, 4);
}

TEST(ScenarioErrors, MissingMiniBatchNamesTheModel) {
  const auto error = bad_scenario_error("mini_batch_missing_for_model_without_default");
  EXPECT_TRUE(contains(error.problem(), "model small_cnn has no default")) << error.problem();
}

TEST(ScenarioErrors, TooManyGpusNamesThePlatform) {
  const auto error = bad_scenario_error("sweep_exceeds_platform");
  EXPECT_TRUE(contains(error.problem(), "16 GPUs exceed platform v100_node")) << error.problem();
}

TEST(ScenarioErrors, InlineTextUsesTheDisplayName) {
  const auto error = input_error([] {
    (void)load_scenario_text("name: inline\nmodel:\n  zoo: resnet18\n  mini_batch: -1\n",
                             "inline.yaml", "");
  });
  EXPECT_EQ(error.where().file, "inline.yaml");
  EXPECT_EQ(error.where().line, 4);
  EXPECT_EQ(error.where().column, 15);
  EXPECT_EQ(error.key(), "model.mini_batch");
}

// ---------------------------------------------------------------------------------------------
// Model-parallel stages, platform files and the default scenario

TEST(ModelStages, StagesGivenByNameStartWhereNamed) {
  const auto loaded = load_scenario(kGoodDir + "/model_stages_by_name.yaml");
  ASSERT_EQ(loaded.points.size(), 1u);
  const auto& plan = loaded.points[0].plan;
  EXPECT_EQ(plan.stages, 3);
  EXPECT_EQ(loaded.points[0].config.gpus(), 6);
  auto stage_of = [&](const std::string& name) {
    return plan.layers[layer_index(loaded.model, name)].stage;
  };
  EXPECT_EQ(stage_of("input"), 0);
  EXPECT_EQ(stage_of("pool3"), 0);
  EXPECT_EQ(stage_of("conv4"), 1);
  EXPECT_EQ(stage_of("act7"), 1);
  EXPECT_EQ(stage_of("drop1"), 2);
  EXPECT_EQ(stage_of("loss"), 2);
}

TEST(Platform, ClusterFileAndNodeLimit) {
  const auto loaded = load_scenario(kGoodDir + "/cluster_file_hybrid.yaml");
  EXPECT_EQ(loaded.cluster.name, "lassen");
  EXPECT_EQ(loaded.cluster.nodes, 8);
  EXPECT_EQ(loaded.cluster.total_gpus(), 32);
  EXPECT_DOUBLE_EQ(loaded.device_capacity_bytes, 16.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(loaded.scenario.memory.offload, OffloadPolicy::conv);
  EXPECT_EQ(loaded.scenario.micro_batching.mode, MicroBatchMode::whole_network);
  EXPECT_DOUBLE_EQ(loaded.scenario.micro_batching.workspace_limit_bytes, 512.0 * 1024 * 1024);
  EXPECT_EQ(loaded.scenario.sim.network_model, "LV08");
  ASSERT_EQ(loaded.points.size(), 2u);
  EXPECT_EQ(loaded.points[0].config.data, 2);
  EXPECT_EQ(loaded.points[0].config.mini_batch, 8);
  EXPECT_EQ(loaded.points[1].config.data, 4);
  EXPECT_EQ(loaded.points[1].config.mini_batch, 4);
}

TEST(DefaultScenario, LoadsWithNinePoints) {
  const auto loaded = load_default_scenario();
  EXPECT_EQ(loaded.scenario.name, "default");
  EXPECT_EQ(loaded.model.name(), "cosmoflow");
  EXPECT_EQ(loaded.cluster.name, "lassen");
  ASSERT_EQ(loaded.points.size(), 9u);
  for (std::size_t i = 0; i < loaded.points.size(); ++i) {
    const auto& config = loaded.points[i].config;
    EXPECT_EQ(config.spatial_grid, (std::vector<std::int64_t>{4, 1, 1}));
    EXPECT_EQ(config.data, std::int64_t{1} << i);
    EXPECT_EQ(config.mini_batch, 1);
    EXPECT_EQ(config.gpus(), std::int64_t{4} << i);
  }
  EXPECT_EQ(loaded.points[0].plan.spatial_end, layer_index(loaded.model, "pool5"));
}

TEST(DefaultScenario, MatchesTheShippedFile) {
  const auto built_in = load_default_scenario();
  const auto shipped = load_scenario(kSourceDir + "/scenarios/default.yaml");
  ASSERT_EQ(built_in.points.size(), shipped.points.size());
  for (std::size_t i = 0; i < built_in.points.size(); ++i) {
    EXPECT_EQ(built_in.points[i].config.gpus(), shipped.points[i].config.gpus());
  }
}

// ---------------------------------------------------------------------------------------------
// Regressions: problems once accepted or reported without a location.

TEST(LoaderRegressions, MissingModelFileIsReportedAtTheScenariosKey) {
  const auto error = input_error([] {
    (void)load_scenario_text("name: x\nmodel:\n  file: no_such_model.yaml\n  mini_batch: 1\n",
                             "missing_model.yaml", kModelDir);
  });
  EXPECT_EQ(error.where().file, "missing_model.yaml");
  EXPECT_EQ(error.where().line, 3);
  EXPECT_EQ(error.key(), "model.file");
}

TEST(LoaderRegressions, DotDotNameIsRejected) {
  // The name becomes the output directory results/<name>.
  const auto error =
      input_error([] { (void)load_scenario_text("name: ..\nmodel: {zoo: cosmoflow}\n", "n", ""); });
  EXPECT_EQ(error.key(), "name");
}

TEST(LoaderRegressions, UntilIsCheckedWithoutASplit) {
  const auto error = input_error([] {
    (void)load_scenario_text(
        "name: x\nmodel: {zoo: cosmoflow}\nparallelism: {spatial: {grid: [1, 1, 1], until: "
        "pool9}}\n",
        "u", "");
  });
  EXPECT_EQ(error.key(), "parallelism.spatial.until");
}

TEST(LoaderRegressions, GpuProductOverflowIsRejected) {
  const auto error = input_error([] {
    (void)load_scenario_text(
        "name: x\nmodel: {zoo: cosmoflow}\nparallelism: {data: 16777216, model: {degree: 2}}\n",
        "o", "");
  });
  EXPECT_EQ(error.key(), "parallelism");
}

TEST(LoaderRegressions, RepeatedSweepValueIsRejected) {
  const auto error = input_error([] {
    (void)load_scenario_text("name: x\nmodel: {zoo: cosmoflow}\nsweep: {gpus: [1, 2, 2]}\n", "r",
                             "");
  });
  EXPECT_EQ(error.key(), "sweep.gpus[2]");
}

TEST(LoaderRegressions, SwappedLettersGetASuggestion) {
  const auto error = input_error(
      [] { (void)load_scenario_text("name: x\nmodel: {zoo: cosmoflow, optoins: {}}\n", "s", ""); });
  EXPECT_NE(error.problem().find("did you mean 'options'?"), std::string::npos) << error.what();
}

}  // namespace
}  // namespace tessera
