// The result schema: CSV round trips and JSON documents (CSV errors:
// result_csv_errors_test.cpp; the files: result_files_test.cpp).
#include <gtest/gtest.h>

#include "result_samples.hpp"
#include "test_support.hpp"

#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/core/result/result_schema.hpp"

namespace tessera {
namespace {

using test::contains;
using test::sample_point;
using test::sample_points;
using test::sample_run;

std::string first_line(const std::string& text) {
  return text.substr(0, text.find('\n'));
}

// ---------------------------------------------------------------------------------------------
// CSV

TEST(ResultsCsv, RoundTripsEveryField) {
  const auto points = sample_points();
  const auto csv = results_to_csv(points);
  const auto back = results_from_csv(csv, "results.csv");
  ASSERT_EQ(back.size(), points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(back[i], points[i]) << "point " << i;
  }
  EXPECT_EQ(back[1].note, "needs 93.1 GiB, \"device\" has 80 GiB,\nsee memory, then: retry");
  EXPECT_EQ(back[0].breakdown.halo_seconds, 1e-300);
  EXPECT_EQ(back[0].step_seconds, 0.1);
  EXPECT_EQ(back[0].breakdown.other_communication_seconds, 5e-324);
  // Writing what was read gives the same text.
  EXPECT_EQ(results_to_csv(back), csv);
}

TEST(ResultsCsv, RoundTripsRandomDoubles) {
  std::vector<PointResult> points;
  std::uint64_t state = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < 200; ++i) {
    auto p = sample_point();
    p.point = i;
    // Arbitrary finite bit patterns, spread over the whole exponent range.
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    double value = 0;
    const std::uint64_t exponent = state % 2046 + 1;  // never 0x7ff: no infinities or NaNs
    const std::uint64_t bits = (state & 0x800f'ffff'ffff'ffffULL) | exponent << 52;
    std::memcpy(&value, &bits, sizeof value);
    p.step_seconds = value;
    p.peak_memory_bytes = -value;
    points.push_back(p);
  }
  EXPECT_EQ(results_from_csv(results_to_csv(points), "random.csv"), points);
}

// Results written before the staging phase have no staging_s column: nothing was staged.
TEST(ResultsCsv, FilesWithoutTheStagingColumnReadAsNothingStaged) {
  auto csv = results_to_csv({sample_point()});
  for (const std::string field : {",staging_s", ",812.25"}) {
    const auto at = csv.find(field);
    ASSERT_NE(at, std::string::npos) << field;
    csv.erase(at, field.size());
  }
  const auto points = results_from_csv(csv, "old.csv");
  ASSERT_EQ(points.size(), 1u);
  EXPECT_EQ(points[0].staging_seconds, 0);
  EXPECT_EQ(points[0].first_epoch_step_seconds, 0.4375);
}

TEST(ResultsCsv, HeaderIsTheColumnList) {
  const auto csv = results_to_csv({sample_point()});
  std::string header;
  for (const auto& column : results_csv_columns()) header += (header.empty() ? "" : ",") + column;
  EXPECT_EQ(first_line(csv), header);
  EXPECT_EQ(results_csv_columns().size(), 35u);
  EXPECT_EQ(results_csv_columns().front(), "scenario");
  EXPECT_EQ(results_csv_columns().back(), "note");
  EXPECT_EQ(first_line(results_to_csv({})), header);
  EXPECT_TRUE(results_from_csv(results_to_csv({}), "empty.csv").empty());
}

TEST(ResultsCsv, FieldsAreQuotedOnlyWhenNeeded) {
  auto p = sample_point();
  p.note = "a, \"b\"";
  const auto csv = results_to_csv({p});
  const auto row = csv.substr(csv.find('\n') + 1);
  EXPECT_TRUE(row.starts_with("cosmoflow_strong,3,sim,16,2,4x2x1,1,2,4,8,ok,0.1,")) << row;
  EXPECT_TRUE(row.ends_with(
      ",true,simulated,mixed,estimated,90.25,14414.0625,1441.40625,\"a, \"\"b\"\"\"\n"))
      << row;
}

TEST(ResultsCsv, AcceptsCrLfLineEnds) {
  const auto points = sample_points();
  std::string csv = results_to_csv({points[0], points[2]});
  std::string crlf;
  for (char c : csv) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  EXPECT_EQ(results_from_csv(crlf, "windows.csv"),
            (std::vector<PointResult>{points[0], points[2]}));
}

// ---------------------------------------------------------------------------------------------
// Enumerations

TEST(ResultSchemaNames, ProvenanceRoundTrips) {
  for (auto value :
       {Provenance::measured, Provenance::simulated, Provenance::profile, Provenance::roofline,
        Provenance::mixed, Provenance::estimated, Provenance::none}) {
    EXPECT_EQ(provenance_from_string(to_string(value)), value) << to_string(value);
  }
  EXPECT_EQ(to_string(Provenance::roofline), "roofline");
  EXPECT_THROW(provenance_from_string("Measured"), std::invalid_argument);
  EXPECT_THROW(provenance_from_string(""), std::invalid_argument);
}

TEST(ResultSchemaNames, StatusRoundTrips) {
  for (auto value :
       {PointStatus::ok, PointStatus::does_not_fit, PointStatus::skipped, PointStatus::failed}) {
    EXPECT_EQ(point_status_from_string(to_string(value)), value) << to_string(value);
  }
  EXPECT_EQ(to_string(PointStatus::does_not_fit), "does_not_fit");
  EXPECT_THROW(point_status_from_string("OK"), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// StepBreakdown

TEST(StepBreakdown, TotalAddsEveryCategory) {
  StepBreakdown b;
  EXPECT_EQ(b.total(), 0);
  b.compute_seconds = 1;
  b.halo_seconds = 2;
  b.allreduce_seconds = 4;
  b.other_communication_seconds = 8;
  b.io_seconds = 16;
  b.offload_seconds = 32;
  b.idle_seconds = 64;
  EXPECT_EQ(b.total(), 127);
}

// ---------------------------------------------------------------------------------------------
// JSON

TEST(ResultsJson, PointHasTheDocumentedFields) {
  const auto p = sample_points()[1];
  const auto j = to_json(p);
  EXPECT_EQ(j.at("scenario"), p.scenario);
  EXPECT_EQ(j.at("point"), 4);
  EXPECT_EQ(j.at("backend"), "sim");
  EXPECT_EQ(j.at("gpus"), 16);
  EXPECT_EQ(j.at("parallelism").at("data"), 2);
  EXPECT_EQ(j.at("parallelism").at("spatial_grid"), "4x2x1");
  EXPECT_EQ(j.at("parallelism").at("model_degree"), 1);
  EXPECT_EQ(j.at("mini_batch"), 4);
  EXPECT_EQ(j.at("global_batch"), 8);
  EXPECT_EQ(j.at("status"), "does_not_fit");
  EXPECT_EQ(j.at("step_s").get<double>(), 0.1);
  EXPECT_EQ(j.at("samples_per_s").get<double>(), p.samples_per_second);
  const auto& b = j.at("breakdown_s");
  EXPECT_EQ(b.size(), 7u);
  EXPECT_EQ(b.at("compute").get<double>(), p.breakdown.compute_seconds);
  EXPECT_EQ(b.at("halo").get<double>(), p.breakdown.halo_seconds);
  EXPECT_EQ(b.at("allreduce").get<double>(), p.breakdown.allreduce_seconds);
  EXPECT_EQ(b.at("other_comm").get<double>(), p.breakdown.other_communication_seconds);
  EXPECT_EQ(b.at("io").get<double>(), p.breakdown.io_seconds);
  EXPECT_EQ(b.at("offload").get<double>(), p.breakdown.offload_seconds);
  EXPECT_EQ(b.at("idle").get<double>(), p.breakdown.idle_seconds);
  EXPECT_EQ(j.at("peak_memory_bytes").get<double>(), p.peak_memory_bytes);
  EXPECT_EQ(j.at("device_capacity_bytes").get<double>(), p.device_capacity_bytes);
  EXPECT_EQ(j.at("fits"), false);
  EXPECT_EQ(j.at("epochs").get<double>(), 90.25);
  EXPECT_EQ(j.at("steps_to_target").get<double>(), 14414.0625);
  EXPECT_EQ(j.at("time_to_train_s").get<double>(), 1441.40625);
  EXPECT_EQ(j.at("note"), p.note);
  const auto& provenance = j.at("provenance");
  EXPECT_EQ(provenance.at("step_s"), "none");
  EXPECT_EQ(provenance.at("breakdown_s"), "none");
  EXPECT_EQ(provenance.at("compute"), "profile");
  EXPECT_EQ(provenance.at("peak_memory_bytes"), "measured");
}

TEST(ResultsJson, LayerComputeTimesRoundTripAndAreOmittedWhenEmpty) {
  auto p = sample_point();
  EXPECT_FALSE(to_json(p).contains("layer_compute_s"));
  p.layer_compute = {
      {"conv1", "forward", 0.25}, {"conv1", "backward", 0.5}, {"optimizer", "update", 0.125}};
  const auto j = to_json(p);
  ASSERT_TRUE(j.contains("layer_compute_s"));
  EXPECT_EQ(j.at("layer_compute_s").at(1).at("pass"), "backward");
  EXPECT_EQ(layer_compute_from_json(j.at("layer_compute_s")), p.layer_compute);
}

TEST(ResultsJson, MalformedLayerComputeTimesAreRejected) {
  EXPECT_THROW(layer_compute_from_json(nlohmann::json::object()), std::invalid_argument);
  EXPECT_THROW(layer_compute_from_json(nlohmann::json::parse(R"([{"layer": "conv1"}])")),
               std::invalid_argument);
  EXPECT_THROW(layer_compute_from_json(nlohmann::json::parse(
                   R"([{"layer": "conv1", "pass": "forward", "seconds": "fast"}])")),
               std::invalid_argument);
}

PointResult with_point(std::int64_t index) {
  PointResult result;
  result.point = index;
  return result;
}

TEST(ResultsJson, JsonOnlyFieldsAreAttachedToCsvRowsByPoint) {
  std::vector<PointResult> rows{with_point(0), with_point(1)};
  const auto document = nlohmann::json::parse(R"({"points": [
      {"point": 1, "layer_compute_s": [{"layer": "conv1", "pass": "forward", "seconds": 0.5}],
       "micro_batching": {"conv_s": 0.25}},
      {"point": 0, "layer_compute_s": "malformed"}]})");
  attach_json_only_fields(rows, document);
  EXPECT_TRUE(rows[0].layer_compute.empty());
  ASSERT_EQ(rows[1].layer_compute.size(), 1u);
  EXPECT_DOUBLE_EQ(rows[1].layer_compute[0].seconds, 0.5);
  EXPECT_EQ(rows[1].micro_batching.at("conv_s"), 0.25);
  EXPECT_TRUE(rows[0].micro_batching.is_null());
  attach_json_only_fields(rows, nlohmann::json());  // no document: nothing changes
  EXPECT_EQ(rows[1].layer_compute.size(), 1u);
}

TEST(ResultsJson, ProvenanceFollowsThePoint) {
  const auto j = to_json(sample_point());
  EXPECT_EQ(j.at("provenance").at("step_s"), "simulated");
  EXPECT_EQ(j.at("provenance").at("breakdown_s"), "simulated");
  EXPECT_EQ(j.at("provenance").at("compute"), "mixed");
  EXPECT_EQ(j.at("provenance").at("peak_memory_bytes"), "estimated");
}

TEST(ResultsJson, EveryCsvColumnHasAJsonCounterpart) {
  // The CSV is the JSON flattened: the same numbers under the same (or nested) names.
  const auto j = to_json(sample_point());
  for (const std::string column :
       {"scenario", "point", "backend", "gpus", "mini_batch", "global_batch", "status", "step_s",
        "samples_per_s", "first_epoch_step_s", "staging_s", "input_source", "peak_memory_bytes",
        "device_capacity_bytes", "fits", "epochs", "steps_to_target", "time_to_train_s", "note"}) {
    EXPECT_TRUE(j.contains(column)) << column;
  }
  for (const std::string column : {"data", "spatial_grid", "model_degree", "tensor_degree"}) {
    EXPECT_TRUE(j.at("parallelism").contains(column)) << column;
  }
}

TEST(ResultsJson, RunHasMetadataAndPoints) {
  const auto run = sample_run();
  const auto j = to_json(run);
  EXPECT_EQ(j.at("schema"), "tessera-run/1");
  EXPECT_EQ(j.at("scenario"), run.scenario);
  EXPECT_EQ(j.at("scenario_file"), run.scenario_file);
  EXPECT_EQ(j.at("backend"), "sim");
  EXPECT_EQ(j.at("tessera_version"), "0.1.0");
  EXPECT_EQ(j.at("created_utc"), run.created_utc);
  EXPECT_EQ(j.at("platform"), run.platform);
  EXPECT_EQ(j.at("model"), "cosmoflow");
  EXPECT_EQ(j.at("settings").at("network_model"), "CM02");
  EXPECT_EQ(j.at("settings").at("gradient_bucket_bytes"), 26214400);
  ASSERT_TRUE(j.at("points").is_array());
  ASSERT_EQ(j.at("points").size(), run.points.size());
  for (std::size_t i = 0; i < run.points.size(); ++i) {
    EXPECT_EQ(j.at("points")[i], to_json(run.points[i])) << i;
  }
  RunResult empty;
  EXPECT_TRUE(to_json(empty).at("points").is_array());
  EXPECT_TRUE(to_json(empty).at("points").empty());
}

}  // namespace
}  // namespace tessera
