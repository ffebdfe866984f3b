// Resume keeps a stored point only when nothing that determined it changed: each kind of input
// edited in turn makes the next run recompute the points and say why.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "tessera/core/result/run_inputs.hpp"
#include "tessera/core/result/sweep_runner.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
}

void replace_in(const fs::path& path, const std::string& from, const std::string& to) {
  auto text = read_text(path);
  const auto at = text.find(from);
  ASSERT_NE(at, std::string::npos) << from << " not in " << path;
  write_text(path, text.replace(at, from.size(), to));
}

// A scenario reading a model file, a cluster file and a SimGrid platform file, in its own
// directory, run by a stand-in backend that counts the points it runs.
class ResumeInputs : public ::testing::Test {
 protected:
  void SetUp() override {
    directory_ = fs::temp_directory_path() /
                 ("tessera-resume-inputs-" +
                  std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
                  ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(directory_);
    fs::create_directories(directory_ / "data");
    const fs::path test_data = TESSERA_TEST_DATA_DIR;
    fs::copy_file(test_data / "models/small_cnn.yaml", directory_ / "model.yaml");
    fs::copy_file(test_data / "clusters/two_pcie_nodes.yaml", directory_ / "cluster.yaml");
    fs::copy_file(test_data / "platforms/four_gpus.xml", directory_ / "platform.xml");
    write_text(directory_ / "profiles.csv", "stand-in profile bytes\n");
    write_text(directory_ / "data/sample_0.h5", "stand-in sample\n");
    write_scenario("[1, 2]", "float32");
  }
  void TearDown() override { fs::remove_all(directory_); }

  void write_scenario(const std::string& gpus, const std::string& dtype) {
    write_text(directory_ / "scenario.yaml", R"(name: resume
model: {file: model.yaml, mini_batch: 4, dtype: )" +
                                                 dtype + R"(}
io: {format: hdf5, dataset: )" + (directory_ / "data").string() +
                                                 R"(}
platform:
  cluster: cluster.yaml
sweep: {scaling: weak, grow: data, gpus: )" + gpus +
                                                 R"(}
)");
  }

  SweepRunResult run(const std::string& backend = "sim", const std::string& version = "1") {
    const auto loaded = load_scenario((directory_ / "scenario.yaml").string());
    SweepRunOptions options;
    options.backend = backend;
    options.output_directory = (directory_ / "results").string();
    options.tessera_version = version;
    options.settings = settings_;
    options.profile_files = {(directory_ / "profiles.csv").string()};
    options.machine = machine_;
    options.only_points = only_points_;
    options.resume = resume_;
    return run_sweep(loaded, options, [&](const SweepPoint& point) {
      ++ran_;
      PointResult result;
      result.scenario = loaded.scenario.name;
      result.point = static_cast<std::int64_t>(point.index);
      result.backend = backend;
      result.gpus = point.config.gpus();
      result.data = point.config.data;
      result.spatial_grid = grid_to_string(point.config.spatial_grid);
      result.model_degree = point.config.model_degree;
      result.mini_batch = point.config.mini_batch;
      result.step_seconds = 0.5 + static_cast<double>(ran_);
      return result;
    });
  }

  // Runs once, edits, runs again: every point is recomputed for `reason`.
  void expect_recomputed_after(const std::function<void()>& edit, const std::string& reason,
                               const std::string& backend = "sim") {
    run(backend);
    edit();
    ran_ = 0;
    const auto again = run(backend);
    EXPECT_EQ(ran_, 2);
    EXPECT_EQ(again.resumed, 0u);
    EXPECT_EQ(again.recomputed, 2u);
    EXPECT_EQ(resume_summary(again), "kept 0 points; recomputed 2: " + reason);
  }

  fs::path directory_;
  nlohmann::json settings_ = {{"network_model", "CM02"}};
  nlohmann::json machine_;  // null: the simulator's numbers do not depend on the machine
  std::vector<std::size_t> only_points_;
  bool resume_ = true;
  int ran_ = 0;
};

TEST_F(ResumeInputs, UnchangedInputsKeepEveryPoint) {
  run();
  ran_ = 0;
  const auto again = run();
  EXPECT_EQ(ran_, 0);
  EXPECT_EQ(again.resumed, 2u);
  EXPECT_EQ(resume_summary(again), "kept 2 points");
  // Touching a file without changing its bytes changes nothing either.
  write_text(directory_ / "cluster.yaml", read_text(directory_ / "cluster.yaml"));
  EXPECT_EQ(run().resumed, 2u);
  EXPECT_EQ(ran_, 0);
}

TEST_F(ResumeInputs, AScenarioKeyChanged) {
  expect_recomputed_after([&] { write_scenario("[1, 2]", "float16"); }, "scenario changed");
}

TEST_F(ResumeInputs, TheModelFileChanged) {
  expect_recomputed_after(
      [&] { replace_in(directory_ / "model.yaml", "out_features: 10}", "out_features: 20}"); },
      "model changed");
}

TEST_F(ResumeInputs, TheClusterFileChangedUnderTheSameName) {
  expect_recomputed_after(
      [&] {
        replace_in(directory_ / "cluster.yaml", "nic_bandwidth: 100 Gb/s",
                   "nic_bandwidth: 10 Gb/s");
      },
      "cluster file changed");
}

TEST_F(ResumeInputs, TheSimGridPlatformFileChanged) {
  write_text(directory_ / "scenario.yaml", R"(name: resume
model: {file: model.yaml, mini_batch: 4}
platform:
  preset: v100_node
  simgrid_xml: {file: platform.xml, gpu_hosts: "gpu-{i}", gpus_per_node: 4}
sweep: {scaling: weak, grow: data, gpus: [1, 2]}
)");
  expect_recomputed_after(
      [&] {
        write_text(directory_ / "platform.xml",
                   read_text(directory_ / "platform.xml") + "<!-- edited -->\n");
      },
      "SimGrid platform file changed");
}

TEST_F(ResumeInputs, TheProfilesChanged) {
  expect_recomputed_after([&] { write_text(directory_ / "profiles.csv", "other bytes\n"); },
                          "profiles changed");
}

TEST_F(ResumeInputs, TheBackendSettingsChanged) {
  expect_recomputed_after([&] { settings_["network_model"] = "LV08"; }, "backend settings changed");
}

TEST_F(ResumeInputs, AMeasurementTakenWithOtherThreadsIsRecomputed) {
  machine_ = {{"devices", {"cpu"}}, {"omp_num_threads", ""}};
  expect_recomputed_after([&] { machine_["omp_num_threads"] = "2"; },
                          "the machine or its compute threads changed", "real");
}

TEST_F(ResumeInputs, ThePointsConfigurationChanged) {
  expect_recomputed_after([&] { write_scenario("[2, 4]", "float32"); },
                          "the point's configuration changed (GPUs, grid or batch)");
}

TEST_F(ResumeInputs, TheScenarioWasRenamed) {
  expect_recomputed_after(
      [&] { replace_in(directory_ / "scenario.yaml", "name: resume", "name: renamed"); },
      "the scenario's name changed");
}

TEST_F(ResumeInputs, TheDataSetChangedForARealRun) {
  expect_recomputed_after([&] { write_text(directory_ / "data/sample_1.h5", "one more sample\n"); },
                          "data set changed", "real");
}

TEST_F(ResumeInputs, TheSimulatorDoesNotReadTheDataSet) {
  run("sim");
  write_text(directory_ / "data/sample_1.h5", "one more sample\n");
  ran_ = 0;
  EXPECT_EQ(run("sim").resumed, 2u);
  EXPECT_EQ(ran_, 0);
}

TEST_F(ResumeInputs, TesserasVersionChanged) {
  run("sim", "1");
  ran_ = 0;
  const auto again = run("sim", "2");
  EXPECT_EQ(ran_, 2);
  EXPECT_EQ(resume_summary(again), "kept 0 points; recomputed 2: Tessera itself changed");
}

TEST_F(ResumeInputs, AnExtendedSweepKeepsThePointsItHad) {
  run();
  write_scenario("[1, 2, 4]", "float32");
  ran_ = 0;
  const auto again = run();
  EXPECT_EQ(ran_, 1);
  EXPECT_EQ(again.resumed, 2u);
  EXPECT_EQ(again.recomputed, 0u);
}

// `--points 1 --fresh` runs point 1 again and keeps point 0's row: choosing points loses nothing.
TEST_F(ResumeInputs, SelectedPointsRunAloneAndTheOthersKeepTheirRows) {
  write_scenario("[1, 2, 4]", "float32");
  run();
  only_points_ = {1};
  resume_ = false;
  ran_ = 0;
  const auto again = run();
  EXPECT_EQ(ran_, 1);
  ASSERT_EQ(again.points.size(), 3u);
  EXPECT_EQ(again.points[0].point, 0);
  EXPECT_EQ(again.points[1].step_seconds, 1.5);  // run again: the stand-in's first step this time
  EXPECT_EQ(again.points[2].point, 2);
  EXPECT_EQ(again.points[2].step_seconds, 3.5);  // kept from the first run
  EXPECT_EQ(again.resumed, 2u);
  EXPECT_NE(read_text(directory_ / "results/sim.csv").find("\nresume,2,sim,4,"), std::string::npos)
      << read_text(directory_ / "results/sim.csv");
}

TEST_F(ResumeInputs, APointLeftOutWithNoStoredRowHasNone) {
  only_points_ = {1};
  const auto first = run();
  EXPECT_EQ(ran_, 1);
  ASSERT_EQ(first.points.size(), 1u);
  EXPECT_EQ(first.points[0].point, 1);
  EXPECT_EQ(resume_summary(first),
            "kept 0 points; 1 point not selected (--points) and not in "
            "the results");
  // Point 1 is kept when the selection changes to point 0, which runs.
  only_points_ = {0};
  ran_ = 0;
  const auto second = run();
  EXPECT_EQ(ran_, 1);
  ASSERT_EQ(second.points.size(), 2u);
  EXPECT_EQ(second.points[0].point, 0);
  EXPECT_EQ(second.points[1].point, 1);
}

// What MPI ranks share out before run_sweep records it: the points it would run.
TEST_F(ResumeInputs, ThePointsToRunAreThoseNotKept) {
  const auto options_for = [&](const std::string& version) {
    SweepRunOptions options;
    options.backend = "sim";
    options.output_directory = (directory_ / "results").string();
    options.tessera_version = version;
    options.settings = settings_;
    options.profile_files = {(directory_ / "profiles.csv").string()};
    return options;
  };
  auto loaded = load_scenario((directory_ / "scenario.yaml").string());
  EXPECT_EQ(points_to_run(loaded, options_for("1")), (std::vector<std::size_t>{0, 1}));
  run();
  EXPECT_TRUE(points_to_run(loaded, options_for("1")).empty());
  EXPECT_EQ(points_to_run(loaded, options_for("2")), (std::vector<std::size_t>{0, 1}));
  write_scenario("[1, 2, 4]", "float32");
  loaded = load_scenario((directory_ / "scenario.yaml").string());
  EXPECT_EQ(points_to_run(loaded, options_for("1")), (std::vector<std::size_t>{2}));
  auto selected = options_for("2");
  selected.only_points = {0, 2};
  EXPECT_EQ(points_to_run(loaded, selected), (std::vector<std::size_t>{0, 2}));
}

TEST_F(ResumeInputs, TheJsonIsTheRecordTheCsvFollows) {
  const auto first = run();
  // A kill between the two writes leaves the CSV behind; resume reads the JSON and rewrites it.
  fs::remove(first.csv_path);
  ran_ = 0;
  const auto again = run();
  EXPECT_EQ(ran_, 0);
  EXPECT_EQ(again.resumed, 2u);
  EXPECT_EQ(results_from_csv(read_text(again.csv_path), again.csv_path).size(), 2u);
}

TEST_F(ResumeInputs, AnUnreadableRecordIsRecomputedAndSaysSo) {
  const auto first = run();
  write_text(first.json_path, "{ not json");
  ran_ = 0;
  const auto again = run();
  EXPECT_EQ(ran_, 2);
  EXPECT_EQ(resume_summary(again),
            "kept 0 points; recomputed 2: the previous results file could not be read");
}

TEST(RunInputs, AStoredResultWithoutDigestsIsRecomputed) {
  EXPECT_EQ(changed_inputs(nlohmann::json(), {{"scenario", "x"}}),
            std::vector<std::string>{"inputs"});
  EXPECT_EQ(describe_input_change("inputs"), "stored without input digests");
  EXPECT_EQ(changed_inputs({{"scenario", "x"}, {"profiles", "p"}}, {{"scenario", "x"}}),
            std::vector<std::string>{"profiles"});
}

TEST(FailedPoints, AreSummedUpWithTheirNotesAndOnlyThem) {
  std::vector<PointResult> points(4);
  for (std::size_t i = 0; i < points.size(); ++i) points[i].point = static_cast<std::int64_t>(i);
  EXPECT_EQ(failed_points_summary(points), "");
  points[1].status = PointStatus::skipped;
  points[2].status = PointStatus::does_not_fit;
  EXPECT_EQ(failed_points_summary(points), "");
  points[3].status = PointStatus::failed;
  points[3].note = "training stopped at step 2: the loss is nan";
  EXPECT_EQ(failed_points_summary(points),
            "1 of 4 point(s) failed (the others are written; a rerun recomputes only these):\n"
            "  point 3: training stopped at step 2: the loss is nan");
}

}  // namespace
}  // namespace tessera
