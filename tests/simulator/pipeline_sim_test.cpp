// Model parallelism played: micro-batches flow through the stages as the schedule says, a stage
// waiting for another's output idles (a pipeline bubble, not communication), and on a network
// that costs nothing the step and the bubble follow GPipe's closed form.
#include <gtest/gtest.h>

#include <unistd.h>

#include <string>

#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/strategy/step_program.hpp"
#include "tessera/simulator/simulate_point.hpp"

namespace tessera {
namespace {

const std::string kPipelineClusters = TESSERA_TEST_DATA_DIR "/clusters";

// p stages of one 256 -> 256 3x3 convolution on 32x32 each (compute-bound, so that a
// micro-batch costs its share of the batch), a ReLU in front so that the first computes its input
// gradient like the others, a regression loss at the end.
std::string chain(int stages) {
  std::string layers =
      "  - {name: input, op: input, shape: [256, 32, 32]}\n  - {name: act, op: relu}\n";
  std::string starts;
  for (int s = 0; s < stages; ++s) {
    layers += "  - {name: conv" + std::to_string(s) +
              ", op: conv, out_channels: 256, kernel: 3, padding: 1}\n";
    if (s > 0) starts += std::string(starts.empty() ? "" : ", ") + "conv" + std::to_string(s);
  }
  layers += "  - {name: loss, op: mse_loss}\n";
  return "name: chain\nlayers:\n" + layers + "#stages " + starts + "\n";
}

struct Pipeline {
  LoadedScenario loaded;
  PointResult result;
  std::vector<StepProgram> programs;

  Pipeline(int stages, std::int64_t micro_batches, const std::string& schedule)
      : loaded(load(stages, micro_batches, schedule)),
        result(sim::simulate_point_isolated(loaded, loaded.points.at(0), {}).result) {}

  static LoadedScenario load(int stages, std::int64_t micro_batches, const std::string& schedule) {
    const auto model_text = chain(stages);
    const auto starts = model_text.substr(model_text.find("#stages ") + 8);
    // One file per process: ctest runs the tests of this binary side by side.
    const std::string path = ::testing::TempDir() + "chain" + std::to_string(stages) + "-" +
                             std::to_string(::getpid()) + ".yaml";
    FILE* file = std::fopen(path.c_str(), "w");
    std::fputs(model_text.c_str(), file);
    std::fclose(file);
    return load_scenario_text(
        "name: pipeline\nmodel: {file: " + path +
            ", mini_batch: 64, optimizer: sgd}\nparallelism: {model: {degree: " +
            std::to_string(stages) + ", stages: [" + starts.substr(0, starts.size() - 1) +
            "], micro_batches: " + std::to_string(micro_batches) + ", schedule: " + schedule +
            "}}\nplatform: {cluster: compute_only.yaml}\n",
        "pipeline.yaml", kPipelineClusters);
  }
};

// A stage's forward and backward compute per micro-batch, and its update.
struct StageTimes {
  double forward = 0, backward = 0, update = 0;
};

std::vector<StageTimes> times_of(const LoadedScenario& loaded) {
  const ComputeCostModel costs(roofline_of(loaded.cluster.gpu), nullptr,
                               loaded.scenario.micro_batching);
  const auto& point = loaded.points.at(0);
  const auto programs = build_step_programs(
      loaded.model, point.plan, costs,
      step_options_of(loaded.scenario, true, InputSource::none, OffloadDecision{}));
  std::vector<StageTimes> stages;
  for (const auto& program : programs) {
    StageTimes times;
    for (const auto& op : program.ops) {
      if (op.kind == StepOpKind::update) times.update += op.seconds;
      if (op.kind != StepOpKind::compute || op.micro_batch != 0) continue;
      (op.direction == Direction::forward ? times.forward : times.backward) += op.seconds;
    }
    stages.push_back(times);
  }
  return stages;
}

// GPipe's makespan on a free network: the forwards flow through the stages (the sum of their
// times, then the slowest once per further micro-batch), the backwards likewise, then stage 0,
// the last to finish, updates. With equal stages it is (m + p - 1)(F + B) + U, of which stage 0
// idles (p - 1)(F + B): the bubble.
TEST(PipelineSimulation, GpipeStepAndBubbleFollowTheClosedForm) {
  for (const auto& [p, m] : {std::pair{2, 4}, std::pair{4, 4}, std::pair{4, 16}}) {
    const Pipeline pipeline(p, m, "gpipe");
    const auto stages = times_of(pipeline.loaded);
    double forwards = 0, backwards = 0, slowest_forward = 0, slowest_backward = 0;
    for (const auto& t : stages) {
      forwards += t.forward;
      backwards += t.backward;
      slowest_forward = std::max(slowest_forward, t.forward);
      slowest_backward = std::max(slowest_backward, t.backward);
    }
    const double expected_step = forwards + backwards +
                                 static_cast<double>(m - 1) * (slowest_forward + slowest_backward) +
                                 stages.front().update;
    EXPECT_NEAR(pipeline.result.step_seconds, expected_step, 0.01 * expected_step)
        << p << " stages, " << m << " micro-batches";
    const double passes = pipeline.result.step_seconds - stages.front().update;
    const double bubble = static_cast<double>(p - 1) / static_cast<double>(m + p - 1);
    EXPECT_NEAR(pipeline.result.breakdown.idle_seconds / passes, bubble, 0.01 * bubble)
        << p << " stages, " << m << " micro-batches";
    EXPECT_LT(pipeline.result.breakdown.other_communication_seconds, 1e-3 * passes);
  }
}

// The trace shows a stage's waits for another stage as idle spans (its bubble), apart from the
// transfers, which are communication: on a free network stage 0's idle spans add up to the
// bubble of the results.
TEST(PipelineSimulation, TheTraceShowsBubblesAsIdle) {
  const auto loaded = Pipeline::load(4, 4, "gpipe");
  sim::SimulationOptions options;
  options.trace = true;
  const auto outcome = sim::simulate_point_isolated(loaded, loaded.points.at(0), options);
  double idle = 0;
  int bubbles = 0;
  for (const auto& event : outcome.trace.at("traceEvents")) {
    if (event.value("cat", "") != "idle" || event.at("pid") != 0) continue;
    ++bubbles;
    idle += event.at("dur").get<double>() * 1e-6;
    EXPECT_NE(event.at("name").get<std::string>().find("(waiting: pipeline bubble)"),
              std::string::npos);
  }
  EXPECT_GT(bubbles, 0);
  EXPECT_NEAR(idle, outcome.result.breakdown.idle_seconds,
              0.01 * outcome.result.breakdown.idle_seconds);
}

TEST(PipelineSimulation, MoreMicroBatchesShrinkTheBubble) {
  const Pipeline few(4, 2, "gpipe"), many(4, 16, "gpipe");
  EXPECT_LT(many.result.breakdown.idle_seconds / many.result.step_seconds,
            few.result.breakdown.idle_seconds / few.result.step_seconds);
  EXPECT_LT(many.result.step_seconds, few.result.step_seconds);
}

TEST(PipelineSimulation, OneForwardOneBackwardTakesAsLongAndHoldsLess) {
  const Pipeline gpipe(4, 8, "gpipe"), interleaved(4, 8, "1f1b");
  EXPECT_NEAR(interleaved.result.step_seconds, gpipe.result.step_seconds,
              0.01 * gpipe.result.step_seconds);
  EXPECT_LT(interleaved.result.peak_memory_bytes, gpipe.result.peak_memory_bytes);
}

// small_cnn's two branches on two GPUs run at the same time: the step is shorter than on one GPU
// by about the shorter branch, on a network that costs nothing.
TEST(PipelineSimulation, BranchesOnTwoStagesRunAtOnce) {
  const std::string model = TESSERA_TEST_DATA_DIR "/models/small_cnn.yaml";
  auto simulate = [&](const std::string& parallelism) {
    const auto loaded = load_scenario_text("name: branches\nmodel: {file: " + model +
                                               ", mini_batch: 256}\nparallelism: " + parallelism +
                                               "\nplatform: {cluster: compute_only.yaml}\n",
                                           "branches.yaml", kPipelineClusters);
    return sim::simulate_point_isolated(loaded, loaded.points.at(0), {}).result;
  };
  const auto one = simulate("{data: 1}");
  const auto two = simulate("{model: {degree: 2, placement: {b2: 1}}}");
  EXPECT_EQ(two.status, PointStatus::ok);
  EXPECT_LT(two.step_seconds, one.step_seconds);
  EXPECT_GT(two.breakdown.idle_seconds, 0);  // stage 0 waits for b2 at the concat
}

}  // namespace
}  // namespace tessera
