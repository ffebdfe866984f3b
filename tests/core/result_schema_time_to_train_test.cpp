// Results written before the time-to-train and tensor-degree fields existed still read (resume
// reads run.json, validate-sim and the plots read the CSV), with those fields 0 (the degree 1).
#include <gtest/gtest.h>

#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>

#include "tessera/core/result/result_schema.hpp"
#include "test_support.hpp"

namespace tessera {
namespace {

using test::contains;

PointResult point_with_time_to_train() {
  PointResult p;
  p.scenario = "resnet";
  p.point = 2;
  p.backend = "sim";
  p.gpus = 64;
  p.data = 64;
  p.mini_batch = 32;
  p.global_batch = 2048;
  p.step_seconds = 0.125;
  p.time_provenance = Provenance::simulated;
  p.epochs = 90.25;
  p.steps_to_target = 14414.0625;
  p.time_to_train_seconds = 1441.40625;
  p.note = "network CM02";
  return p;
}

TEST(ResultsWithoutTimeToTrain, CsvWithoutTheColumnsReadsAsZero) {
  auto p = point_with_time_to_train();
  const auto csv = results_to_csv({p});
  std::string old_csv;
  std::istringstream lines(csv);
  for (std::string line; std::getline(lines, line);) {
    for (const char* columns :
         {",epochs,steps_to_target,time_to_train_s", ",90.25,14414.0625,1441.40625"}) {
      const auto at = line.find(columns);
      if (at != std::string::npos) line.erase(at, std::strlen(columns));
    }
    old_csv += line + "\n";
  }
  ASSERT_NE(old_csv, csv);
  const auto back = results_from_csv(old_csv, "old.csv");
  ASSERT_EQ(back.size(), 1u);
  p.epochs = p.steps_to_target = p.time_to_train_seconds = 0;
  EXPECT_EQ(back[0], p);
}

TEST(ResultsWithoutTensorDegree, CsvWithoutTheColumnReadsAsOne) {
  auto p = point_with_time_to_train();
  p.tensor_degree = 4;
  const auto csv = results_to_csv({p});
  std::string old_csv;
  std::istringstream lines(csv);
  for (std::string line; std::getline(lines, line);) {
    // model_degree 1, then tensor_degree 4 (header) or 4 (row).
    for (const char* column : {",tensor_degree", ",1,4,32,"}) {
      const auto at = line.find(column);
      if (at == std::string::npos) continue;
      line.replace(at, std::strlen(column),
                   std::strcmp(column, ",tensor_degree") == 0 ? "" : ",1,32,");
    }
    old_csv += line + "\n";
  }
  ASSERT_NE(old_csv, csv);
  const auto back = results_from_csv(old_csv, "old.csv");
  ASSERT_EQ(back.size(), 1u);
  p.tensor_degree = 1;
  EXPECT_EQ(back[0], p);
  // A run document written before tensor parallelism reads likewise.
  auto j = to_json(point_with_time_to_train());
  j["parallelism"].erase("tensor_degree");
  EXPECT_EQ(point_result_from_json(j).tensor_degree, 1);
}

TEST(ResultsWithoutTimeToTrain, AHeaderWithOnlySomeOfThemIsNotAResultsFile) {
  std::string text = results_to_csv({point_with_time_to_train()});
  text.erase(text.find(",epochs"), std::strlen(",epochs"));
  try {
    results_from_csv(text, "mangled.csv");
    FAIL() << "a header lacking one time-to-train column was read";
  } catch (const std::runtime_error& error) {
    EXPECT_TRUE(contains(error.what(), "mangled.csv:1: not a Tessera results file"))
        << error.what();
  }
}

TEST(ResultsWithoutTimeToTrain, JsonPointsWithoutThemReadAsZero) {
  auto j = to_json(point_with_time_to_train());
  EXPECT_EQ(point_result_from_json(j).time_to_train_seconds, 1441.40625);
  for (const char* key : {"epochs", "steps_to_target", "time_to_train_s"}) j.erase(key);
  const auto back = point_result_from_json(j);
  EXPECT_EQ(back.epochs, 0);
  EXPECT_EQ(back.steps_to_target, 0);
  EXPECT_EQ(back.time_to_train_seconds, 0);
  j["epochs"] = "ninety";
  EXPECT_THROW(point_result_from_json(j), std::invalid_argument);
}

}  // namespace
}  // namespace tessera
