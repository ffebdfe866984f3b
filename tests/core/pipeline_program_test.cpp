// Model parallelism in the step program: each micro-batch's passes in the schedule's order with
// their own messages between stages, gradients all-reduced once, a tensor sent once to each stage
// that reads it, and an explicit placement whose branches sit on different stages.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "tessera/core/model/model_file.hpp"
#include "tessera/core/strategy/step_program.hpp"
#include "tessera/core/zoo/model_zoo.hpp"

namespace tessera {
namespace {

DeviceRoofline pipeline_test_device() {
  DeviceRoofline device;
  device.device = "test-gpu";
  device.fp32_flops_per_second = 10e12;
  device.memory_bandwidth_bytes_per_second = 1e12;
  return device;
}

std::vector<StepProgram> programs_of(const ModelGraph& model, const ShardPlan& plan) {
  const ComputeCostModel costs(pipeline_test_device(), nullptr, 64.0 * 1024 * 1024);
  StepOptions options;
  options.input_source = InputSource::none;
  return build_step_programs(model, plan, costs, options);
}

std::size_t count(const StepProgram& program, StepOpKind kind, Direction direction) {
  return static_cast<std::size_t>(std::count_if(
      program.ops.begin(), program.ops.end(),
      [&](const StepOp& op) { return op.kind == kind && op.direction == direction; }));
}

ParallelConfig pipeline_config(std::int64_t micro_batches, PipelineSchedule schedule) {
  ParallelConfig config;
  config.data = 2;
  config.spatial_grid = {1, 1, 1};
  config.model_degree = 2;
  config.mini_batch = 8;
  config.micro_batches = micro_batches;
  config.schedule = schedule;
  return config;
}

// The first stage reads the whole step's samples once, whatever the micro-batches (the real
// backend's source reads them together); later stages read nothing.
TEST(PipelineProgram, TheFirstStageReadsTheWholeStepsSamples) {
  const auto model = build_zoo_model("cosmoflow", {{"width", "64"}});
  const ComputeCostModel costs(pipeline_test_device(), nullptr, 64.0 * 1024 * 1024);
  StepOptions options;
  options.input_source = InputSource::file_system;
  const auto read_of = [&](std::int64_t micro_batches, std::size_t stage) {
    const auto plan =
        plan_shards(model, pipeline_config(micro_batches, PipelineSchedule::gpipe), "", {"fc1"});
    const auto programs = build_step_programs(model, plan, costs, options);
    std::vector<StepOp> reads;
    for (const auto& op : programs.at(stage).ops) {
      if (op.kind == StepOpKind::read_start) reads.push_back(op);
    }
    return reads;
  };
  const auto whole = read_of(1, 0);
  const auto piped = read_of(4, 0);
  ASSERT_EQ(whole.size(), 1u);
  ASSERT_EQ(piped.size(), 1u);
  EXPECT_EQ(piped.front().samples, 8);  // the replica's mini-batch
  EXPECT_EQ(whole.front().samples, 8);
  EXPECT_DOUBLE_EQ(piped.front().bytes, whole.front().bytes);
  EXPECT_DOUBLE_EQ(whole.front().bytes, 8.0 * 4 * 64 * 64 * 64 * 4);  // 8 float32 64^3 x 4 volumes
  EXPECT_TRUE(read_of(4, 1).empty());
}

TEST(PipelineProgram, EveryMicroBatchRunsEveryLayerAndTalksToTheNextStage) {
  const auto model = build_zoo_model("cosmoflow", {{"width", "64"}});
  const auto plan = plan_shards(model, pipeline_config(4, PipelineSchedule::gpipe), "", {"fc1"});
  const auto one = plan_shards(model, pipeline_config(1, PipelineSchedule::gpipe), "", {"fc1"});
  const auto programs = programs_of(model, plan);
  const auto reference = programs_of(model, one);
  ASSERT_EQ(programs.size(), 2u);
  for (std::size_t stage = 0; stage < 2; ++stage) {
    const auto& program = programs[stage];
    const auto& single = reference[stage];
    // Four passes of each kind, each with a quarter of the samples.
    EXPECT_EQ(count(program, StepOpKind::compute, Direction::forward),
              4 * count(single, StepOpKind::compute, Direction::forward));
    EXPECT_EQ(count(program, StepOpKind::stage_send, Direction::forward),
              4 * count(single, StepOpKind::stage_send, Direction::forward));
    EXPECT_EQ(count(program, StepOpKind::stage_recv, Direction::backward_data),
              4 * count(single, StepOpKind::stage_recv, Direction::backward_data));
    // The gradients add up over the micro-batches and are all-reduced once, in as many buckets.
    EXPECT_EQ(program.buckets.size(), single.buckets.size());
    EXPECT_EQ(std::count_if(program.ops.begin(), program.ops.end(),
                            [](const StepOp& op) { return op.kind == StepOpKind::update; }),
              1);
    for (const auto& op : program.ops) {
      if (op.kind == StepOpKind::stage_send || op.kind == StepOpKind::stage_recv) {
        EXPECT_EQ(op.bytes * 4, std::find_if(single.ops.begin(), single.ops.end(),
                                             [&](const StepOp& other) {
                                               return other.kind == op.kind &&
                                                      other.layer == op.layer &&
                                                      other.direction == op.direction;
                                             })
                                    ->bytes)
            << op.label;
      }
    }
  }
  // Stage 0 sends its last layer's output once per micro-batch, in order.
  std::vector<std::int64_t> sent;
  for (const auto& op : programs[0].ops) {
    if (op.kind == StepOpKind::stage_send) sent.push_back(op.micro_batch);
  }
  EXPECT_EQ(sent, (std::vector<std::int64_t>{0, 1, 2, 3}));
}

// The first micro-batch to reach its backward writes the step's parameter gradients; each later
// one computes its own, then adds them in: one gradient_sum op per such micro-batch and layer
// with parameters, right after that layer's backward, timed as a streaming kernel over them.
TEST(PipelineProgram, LaterMicroBatchesAddTheirParameterGradientsIntoTheSteps) {
  const auto model = build_zoo_model("cosmoflow", {{"width", "64"}});
  for (const auto schedule : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b}) {
    const auto plan = plan_shards(model, pipeline_config(4, schedule), "", {"fc1"});
    const auto programs = programs_of(model, plan);
    const ComputeCostModel costs(pipeline_test_device(), nullptr, 64.0 * 1024 * 1024);
    for (const auto& program : programs) {
      const auto first_backward =
          std::find_if(program.ops.begin(), program.ops.end(), [](const StepOp& op) {
            return op.kind == StepOpKind::compute && op.direction != Direction::forward;
          });
      ASSERT_NE(first_backward, program.ops.end());
      std::map<std::pair<std::size_t, std::int64_t>, int> sums;
      for (std::size_t o = 0; o < program.ops.size(); ++o) {
        const auto& op = program.ops[o];
        if (op.part != StepPart::gradient_sum) continue;
        ++sums[{op.layer, op.micro_batch}];
        EXPECT_EQ(op.kind, StepOpKind::compute);
        EXPECT_NE(op.micro_batch, first_backward->micro_batch) << op.label;
        const double parameters = static_cast<double>(plan.layers[op.layer].parameters);
        EXPECT_DOUBLE_EQ(op.seconds, costs.gradient_sum_time(parameters, DType::float32).seconds);
        EXPECT_EQ(op.provenance, Provenance::roofline);
        // After the layer's own backward ops of that micro-batch.
        ASSERT_GT(o, 0u);
        const auto& before = program.ops[o - 1];
        EXPECT_EQ(before.layer, op.layer) << op.label;
        EXPECT_EQ(before.direction, Direction::backward_filter) << op.label;
        EXPECT_EQ(before.micro_batch, op.micro_batch) << op.label;
      }
      std::size_t layers_with_parameters = 0;
      for (std::size_t i = 0; i < plan.layers.size(); ++i) {
        if (plan.layers[i].stage != program.stage || plan.layers[i].parameters <= 0) continue;
        ++layers_with_parameters;
        for (std::int64_t k = 0; k < 4; ++k) {
          const bool expected = k != first_backward->micro_batch;
          EXPECT_EQ(sums[std::make_pair(i, k)], expected ? 1 : 0)
              << "layer " << i << " micro-batch " << k;
        }
      }
      EXPECT_GT(layers_with_parameters, 0u);
    }
  }
  // One micro-batch: nothing to add.
  const auto one = plan_shards(model, pipeline_config(1, PipelineSchedule::gpipe), "", {"fc1"});
  for (const auto& program : programs_of(model, one)) {
    EXPECT_TRUE(std::none_of(program.ops.begin(), program.ops.end(),
                             [](const StepOp& op) { return op.part == StepPart::gradient_sum; }));
  }
}

// small_cnn's relu2 feeds two branches (b1, b2) that a concat joins: with b2 on stage 1, relu2's
// output goes there once, b2's output comes back, and the gradients the other way.
TEST(PipelineProgram, BranchesPlacedOnAnotherStageExchangeTheirInputsAndOutputs) {
  const auto model = load_model_file(TESSERA_TEST_DATA_DIR "/models/small_cnn.yaml");
  ParallelConfig config;
  config.spatial_grid = {1, 1};
  config.model_degree = 2;
  config.mini_batch = 4;
  const auto plan = plan_shards(model, config, "", StagePlacement::of_layers({{"b2", 1}}));
  const auto programs = programs_of(model, plan);
  auto labels = [](const StepProgram& program, StepOpKind kind) {
    std::vector<std::string> found;
    for (const auto& op : program.ops) {
      if (op.kind == kind) found.push_back(op.label);
    }
    return found;
  };
  EXPECT_EQ(labels(programs[1], StepOpKind::stage_recv),
            (std::vector<std::string>{"receive relu2 from stage 0",
                                      "receive gradient of b2 from stage 0"}));
  EXPECT_EQ(labels(programs[1], StepOpKind::stage_send),
            (std::vector<std::string>{"send b2 to stage 0", "send gradient of relu2 to stage 0"}));
  EXPECT_EQ(labels(programs[0], StepOpKind::stage_send),
            (std::vector<std::string>{"send relu2 to stage 1", "send gradient of b2 to stage 1"}));
  EXPECT_EQ(labels(programs[0], StepOpKind::stage_recv),
            (std::vector<std::string>{"receive b2 from stage 1",
                                      "receive gradient of relu2 from stage 1"}));
  // Layers not named stay with their first input: only b2 runs on stage 1.
  for (const auto& op : programs[1].ops) {
    if (op.kind == StepOpKind::compute) {
      EXPECT_EQ(model.layers()[op.layer].layer.name, "b2");
    }
  }
}

// Every message a stage sends is received by its peer, in the same order: a send without its
// receive (or the reverse) deadlocks both backends. Placements that pass tensors back and forth,
// the model's first layer on another stage than its input among them (no gradient goes back to
// the samples).
TEST(PipelineProgram, EveryMessageHasItsPartnerInTheSameOrder) {
  const auto model = load_model_file(TESSERA_TEST_DATA_DIR "/models/small_cnn.yaml");
  const std::vector<StagePlacement> placements{
      StagePlacement::of_layers({{"b2", 1}}), StagePlacement::of_layers({{"conv1", 1}, {"fc", 0}}),
      StagePlacement::of_layers(
          {{"conv1", 1}, {"conv2", 0}, {"add1", 1}, {"b1", 0}, {"b2", 1}, {"cat", 0}, {"fc", 1}}),
      StagePlacement({"conv2"})};
  using Message = std::tuple<std::size_t, Direction, std::int64_t>;  // tensor, pass, micro-batch
  auto messages = [](const StepProgram& program, StepOpKind kind, int peer) {
    std::vector<Message> found;
    for (const auto& op : program.ops) {
      if (op.kind == kind && op.peer_stage == peer) {
        found.emplace_back(op.layer, op.direction, op.micro_batch);
      }
    }
    return found;
  };
  for (std::size_t p = 0; p < placements.size(); ++p) {
    for (const std::int64_t micro_batches : {1, 2}) {
      ParallelConfig config;
      config.spatial_grid = {1, 1};
      config.model_degree = 2;
      config.mini_batch = 4;
      config.micro_batches = micro_batches;
      const auto programs = programs_of(model, plan_shards(model, config, "", placements[p]));
      ASSERT_EQ(programs.size(), 2u);
      for (int from = 0; from < 2; ++from) {
        const int to = 1 - from;
        EXPECT_EQ(messages(programs[from], StepOpKind::stage_send, to),
                  messages(programs[to], StepOpKind::stage_recv, from))
            << "placement " << p << ", " << micro_batches << " micro-batches, stage " << from
            << " to " << to;
      }
    }
  }
}

TEST(PipelineProgram, PlacementsAndSchedulesThatCannotWorkAreRefused) {
  const auto model = load_model_file(TESSERA_TEST_DATA_DIR "/models/small_cnn.yaml");
  ParallelConfig config;
  config.spatial_grid = {1, 1};
  config.model_degree = 2;
  config.mini_batch = 4;
  auto key_of = [&](const ParallelConfig& c, const StagePlacement& placement) {
    try {
      plan_shards(model, c, "", placement);
    } catch (const StrategyError& error) {
      return error.key();
    }
    return std::string("accepted");
  };
  auto uneven = config;
  uneven.micro_batches = 3;
  EXPECT_EQ(key_of(uneven, {}), "parallelism.model.micro_batches");
  // b2 on stage 1 sends its output back to stage 0: not a one-way pipeline.
  auto interleaved = config;
  interleaved.schedule = PipelineSchedule::one_f_one_b;
  EXPECT_EQ(key_of(interleaved, StagePlacement::of_layers({{"b2", 1}})),
            "parallelism.model.schedule");
  EXPECT_EQ(key_of(interleaved, {}), "accepted");
  EXPECT_EQ(key_of(config, StagePlacement::of_layers({{"nope", 1}})),
            "parallelism.model.placement");
  EXPECT_EQ(key_of(config, StagePlacement::of_layers({{"input", 1}, {"conv1", 1}})),
            "parallelism.model.placement");  // stage 0 would hold nothing
}

}  // namespace
}  // namespace tessera
