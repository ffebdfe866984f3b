// A point's simulation in a forked child, as run and plan read it back: a crash or an exception is
// a failed row naming why (so that a sweep goes on to its other points), an answer is the row as
// the child computed it, and a failed first epoch fails the point.
#include "child_simulation.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <stdexcept>

namespace tessera::sim {
namespace {

// Point 3 of a sweep: 4 replicas of a 2x1x1 spatial grid, 2 samples each.
SweepPoint third_point() {
  SweepPoint point;
  point.index = 3;
  point.config.data = 4;
  point.config.spatial_grid = {2, 1, 1};
  point.config.mini_batch = 2;
  return point;
}

TEST(ChildSimulation, AKilledChildIsAFailedRowOfItsPointThatSaysItWasKilled) {
  const auto child = run_in_child(
      []() -> nlohmann::json {
        std::raise(SIGKILL);
        return {};
      },
      true);
  const auto outcome = simulation_outcome(child, "cosmoflow", third_point());
  EXPECT_EQ(outcome.result.status, PointStatus::failed);
  EXPECT_EQ(outcome.result.scenario, "cosmoflow");
  EXPECT_EQ(outcome.result.point, 3);
  EXPECT_EQ(outcome.result.backend, "sim");
  EXPECT_EQ(outcome.result.gpus, 8);
  EXPECT_EQ(outcome.result.spatial_grid, "2x1x1");
  EXPECT_EQ(outcome.result.global_batch, 8);
  EXPECT_EQ(outcome.result.note.rfind("simulation crashed (signal 9: killed", 0), 0u)
      << outcome.result.note;
}

TEST(ChildSimulation, AnExceptionInTheChildIsAFailedRowWithItsText) {
  const auto child =
      run_in_child([]() -> nlohmann::json { throw std::runtime_error("no route"); }, true);
  const auto outcome = simulation_outcome(child, "s", third_point());
  EXPECT_EQ(outcome.result.status, PointStatus::failed);
  EXPECT_EQ(outcome.result.note, "simulation failed: no route");
}

TEST(ChildSimulation, AnAnswerComesBackAsTheChildComputedIt) {
  SimulationOutcome sent;
  sent.result.scenario = "s";
  sent.result.backend = "sim";
  sent.result.point = 3;
  sent.result.step_seconds = 0.1234567890123;
  sent.trace = nlohmann::json{{"traceEvents", nlohmann::json::array()}};
  sent.wall_seconds = 1.5;
  sent.simulated_actors = 17;
  const auto child = run_in_child([&] { return simulation_message(sent); }, true);
  const auto outcome = simulation_outcome(child, "s", third_point());
  EXPECT_EQ(outcome.result.status, PointStatus::ok);
  EXPECT_EQ(outcome.result.step_seconds, sent.result.step_seconds);
  EXPECT_EQ(outcome.trace, sent.trace);
  EXPECT_EQ(outcome.wall_seconds, 1.5);
  EXPECT_EQ(outcome.simulated_actors, 17);
  sent.trace = nullptr;
  EXPECT_TRUE(simulation_outcome(run_in_child([&] { return simulation_message(sent); }, true), "s",
                                 third_point())
                  .trace.is_null());
}

TEST(ChildSimulation, AFailedFirstEpochFailsThePointAndAnAnswerAddsItsStep) {
  SimulationOutcome steady;
  steady.result.step_seconds = 0.2;
  steady.wall_seconds = 1;
  SimulationOutcome first;
  first.result.step_seconds = 0.5;
  first.wall_seconds = 2;
  auto joined = steady;
  add_first_epoch(joined, first);
  EXPECT_EQ(joined.result.status, PointStatus::ok);
  EXPECT_EQ(joined.result.first_epoch_step_seconds, 0.5);
  EXPECT_EQ(joined.wall_seconds, 3);
  first.result.status = PointStatus::failed;
  first.result.note = "simulation crashed (signal 9)";
  joined = steady;
  add_first_epoch(joined, first);
  EXPECT_EQ(joined.result.status, PointStatus::failed);
  EXPECT_NE(joined.result.note.find("first epoch: simulation crashed (signal 9)"),
            std::string::npos);
}

}  // namespace
}  // namespace tessera::sim
