// A run's result files: run.json written point by point is the document's own dump, read point
// by point it gives the points back, and both files read back to what was written.
#include <gtest/gtest.h>

#include "result_samples.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/core/result/result_files.hpp"

namespace tessera {
namespace {

using test::sample_points;
using test::sample_run;

std::string dumped(const RunResult& run) {
  return to_json(run).dump(2) + "\n";
}

TEST(RunJsonText, IsTheDocumentsDumpByteForByte) {
  auto run = sample_run();
  EXPECT_EQ(run_json_text(run, point_result_refs(run.points)), dumped(run));
  // Keys after "points" in the header, and texts that look like the key one level down.
  run.resolved_scenario = {{"points", {1, 2}}, {"name", "\n  \"points\": []"}};
  run.statistical_efficiency = {{"source", "published"}, {"epochs", 12.5}};
  run.points[1].note = "\n  \"points\": [],\n";
  EXPECT_EQ(run_json_text(run, point_result_refs(run.points)), dumped(run));
  run.points.resize(1);
  EXPECT_EQ(run_json_text(run, point_result_refs(run.points)), dumped(run));
  run.points.clear();
  EXPECT_EQ(run_json_text(run, {}), dumped(run));
  EXPECT_EQ(run_json_text(RunResult{}, {}), dumped(RunResult{}));
}

TEST(RunJsonText, WritesTheGivenPointsNotTheHeaders) {
  const auto header = sample_run();
  const auto points = sample_points();
  auto expected = header;
  expected.points = {points[3], points[0]};
  EXPECT_EQ(run_json_text(header, {points[3], points[0]}), dumped(expected));
}

// The run JSON is the record resume reads back: every field of a point, JSON-only ones too.
TEST(RunJsonReading, PointsRoundTripThroughTheRunDocument) {
  auto run = sample_run();
  run.points[0].micro_batching = {{"speedup", 1.5}};
  run.points[0].layer_compute = {{"conv1", "forward", 0.25}, {"optimizer", "update", 1e-3}};
  run.points[0].inputs = {{"scenario", "abc"}, {"version", "0.1.0"}};
  // Header objects two levels down, where the points are, are not points.
  run.resolved_scenario = {{"model", {{"zoo", "cosmoflow"}}}, {"sweep", {{"gpus", {4, 8}}}}};
  run.statistical_efficiency = {{"source", {{"epochs", 3}}}};
  EXPECT_EQ(results_from_run_json(dumped(run), "run.json"), run.points);
  EXPECT_EQ(results_from_run_json(to_json(run).dump(), "run.json"), run.points);
  std::vector<std::int64_t> order;
  for_each_run_point(dumped(run), "run.json",
                     [&](PointResult&& point) { order.push_back(point.point); });
  EXPECT_EQ(order, (std::vector<std::int64_t>{3, 4, 5, 6}));
  run.points.clear();
  EXPECT_TRUE(results_from_run_json(dumped(run), "run.json").empty());
}

TEST(RunJsonReading, AMalformedPointOrDocumentIsNamed) {
  const auto message = [](const std::string& text) -> std::string {
    try {
      results_from_run_json(text, "run.json");
    } catch (const std::runtime_error& error) {
      return error.what();
    }
    return "no error";
  };
  RunResult run;
  run.points = {sample_point(), sample_point()};
  auto document = to_json(run);
  document["points"][1]["breakdown_s"].erase("halo");
  EXPECT_EQ(message(document.dump()), "run.json: points[1]: halo: missing");
  document = to_json(run);
  document["points"][1] = 7;
  EXPECT_EQ(message(document.dump()), "run.json: points[1]: expected an object, got 7");
  const std::string not_a_run = "run.json: not a Tessera run document (schema tessera-run/1)";
  EXPECT_EQ(message("[]"), not_a_run);
  EXPECT_EQ(message(""), not_a_run);
  EXPECT_EQ(message(dumped(run).substr(0, 300)), not_a_run);  // cut short
  document = to_json(run);
  document["schema"] = "tessera-run/0";
  EXPECT_EQ(message(document.dump()), not_a_run);
  document = to_json(run);
  document["points"] = {{"first", {{"k", 1}}}};
  EXPECT_NE(message(document.dump()), "no error");
}

class ResultFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto stamp = std::chrono::steady_clock::now().time_since_epoch().count();
    dir_ = std::filesystem::temp_directory_path() /
           ("tessera_result_files_test_" +
            std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
            std::to_string(stamp));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  static std::string read(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

  std::filesystem::path dir_;
};

TEST_F(ResultFiles, WritesCsvAndJson) {
  const auto run = sample_run();
  const auto csv_path = dir_ / "out" / "results.csv";
  const auto json_path = dir_ / "out" / "run.json";
  write_results_csv(csv_path.string(), run.points);
  write_run_json(json_path.string(), run);
  const auto csv = read(csv_path);
  EXPECT_EQ(csv, results_to_csv(run.points));
  EXPECT_EQ(results_from_csv(csv, csv_path.string()), run.points);
  const auto json = nlohmann::json::parse(read(json_path));
  EXPECT_EQ(json, to_json(run));
}

TEST_F(ResultFiles, PointsHeldElsewhereWriteTheSameFiles) {
  const auto run = sample_run();
  RunResult header = run;
  header.points.clear();
  const auto refs = point_result_refs(run.points);
  write_results_csv((dir_ / "a.csv").string(), run.points);
  write_results_csv((dir_ / "b.csv").string(), refs);
  write_run_json((dir_ / "a.json").string(), run);
  write_run_json((dir_ / "b.json").string(), header, refs);
  EXPECT_EQ(read(dir_ / "a.csv"), read(dir_ / "b.csv"));
  EXPECT_EQ(read(dir_ / "a.json"), read(dir_ / "b.json"));
  EXPECT_EQ(read(dir_ / "a.json"), dumped(run));
}

}  // namespace
}  // namespace tessera
