#include "tessera/core/micro_batching/network_micro_batch_plan.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/report/describe_report.hpp"
#include "tessera/core/result/sweep_runner.hpp"
#include "tessera/core/strategy/step_program.hpp"
#include "tessera/core/zoo/model_zoo.hpp"

namespace tessera {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kMs = 1e-3;

DeviceRoofline test_device() {
  DeviceRoofline device;
  device.device = "test-gpu";
  device.fp32_flops_per_second = 10e12;
  device.memory_bandwidth_bytes_per_second = 1e12;
  return device;
}

// CosmoFlow-64 with a mini-batch of 8 on one GPU; the forward kernels of conv1 and conv2 have
// synthetic profiles (the fast/slow pair of the issue's worked case at sizes 1, 2, 4, 8), every
// other kernel has none.
struct Network {
  ModelGraph model = build_zoo_model("cosmoflow", {{"width", "64"}});
  ShardPlan plan;
  ProfileDatabase profiles;

  Network() {
    ParallelConfig config;
    config.spatial_grid = {1, 1, 1};
    config.mini_batch = 8;
    plan = plan_shards(model, config, "", {});
    for (const char* name : {"conv1", "conv2"}) {
      const auto& layer = model.layer(name);
      const auto& shard = plan.layers[*model.index_of(name)];
      const auto key = kernel_shape_key(layer.layer, shard.local_inputs, shard.local_output);
      for (std::int64_t b : {1, 2, 4, 8}) {
        const auto size = static_cast<double>(b);
        for (auto [algorithm, seconds, workspace] :
             {std::tuple{"fast", (0.1 * size + 0.01) * kMs, size * kMiB},
              std::tuple{"slow", (10 * size + 0.1) * kMs, size}}) {
          profiles.add({.device = "test-gpu",
                        .op = "conv",
                        .direction = Direction::forward,
                        .shape = key,
                        .micro_batch = b,
                        .algorithm = algorithm,
                        .time_seconds = seconds,
                        .workspace_bytes = workspace});
        }
      }
    }
  }

  NetworkMicroBatchPlan planned(MicroBatchPolicy policy, MicroBatchMode mode, double limit) const {
    const ComputeCostModel costs(test_device(), &profiles,
                                 MicroBatchingSection{policy, mode, limit});
    return plan_network(model, plan, costs, DType::float32);
  }
};

TEST(NetworkMicroBatchPlan, EveryConvKernelIsPlannedAndProfiledOnesAreMicroBatched) {
  const Network net;
  const auto plan =
      net.planned(MicroBatchPolicy::power_of_two, MicroBatchMode::per_layer, 4 * kMiB);
  std::size_t convolutions = 0;
  for (const auto& layer : net.model.layers())
    convolutions += layer.layer.kind == LayerKind::convolution;
  EXPECT_EQ(plan.kernels.size(), 3 * convolutions);

  const auto* conv1 = plan.find(*net.model.index_of("conv1"), Direction::forward);
  ASSERT_NE(conv1, nullptr);
  EXPECT_EQ(describe(conv1->plan), "2 x 4 fast");
  EXPECT_EQ(conv1->provenance, Provenance::profile);
  EXPECT_TRUE(conv1->limit_met);
  EXPECT_NEAR(conv1->plan.seconds(), 0.82 * kMs, 1e-15);
  // Undivided within 4 MiB, only the slow algorithm fits: 80.1 ms.
  ASSERT_TRUE(conv1->undivided_seconds);
  EXPECT_NEAR(*conv1->undivided_seconds, 80.1 * kMs, 1e-12);
  EXPECT_NEAR(*conv1->speedup(), 80.1 / 0.82, 1e-9);

  // No profile rows: undivided at the roofline, and it says so.
  const auto* backward = plan.find(*net.model.index_of("conv1"), Direction::backward_data);
  ASSERT_NE(backward, nullptr);
  EXPECT_EQ(backward->provenance, Provenance::roofline);
  EXPECT_TRUE(backward->plan.undivided());
  EXPECT_EQ(backward->plan.samples(), 8);
  EXPECT_DOUBLE_EQ(*backward->speedup(), 1.0);
  EXPECT_DOUBLE_EQ(plan.workspace_bytes(), 4 * kMiB);
  EXPECT_TRUE(plan.limit_met());
  EXPECT_GT(*plan.speedup(), 1.0);
}

TEST(NetworkMicroBatchPlan, StepProgramUsesThePlan) {
  const Network net;
  const ComputeCostModel costs(
      test_device(), &net.profiles,
      MicroBatchingSection{MicroBatchPolicy::power_of_two, MicroBatchMode::per_layer, 4 * kMiB});
  const auto programs = build_step_programs(net.model, net.plan, costs, {});
  const StepOp* conv1 = nullptr;
  for (const auto& op : programs[0].ops) {
    if (op.label == "conv1 forward") conv1 = &op;
  }
  ASSERT_NE(conv1, nullptr);
  EXPECT_NEAR(conv1->seconds, 0.82 * kMs, 1e-15);
  EXPECT_EQ(conv1->provenance, Provenance::profile);
  EXPECT_EQ(describe(conv1->micro_batches), "2 x 4 fast");
  // Undivided policy: the old behaviour, the best whole-batch algorithm within the limit.
  const ComputeCostModel undivided(test_device(), &net.profiles, 4 * kMiB);
  const auto undivided_programs = build_step_programs(net.model, net.plan, undivided, {});
  int found = 0;
  for (const auto& op : undivided_programs[0].ops) {
    if (op.label != "conv1 forward") continue;
    EXPECT_NEAR(op.seconds, 80.1 * kMs, 1e-12);
    EXPECT_EQ(describe(op.micro_batches), "1 x 8 slow");
    ++found;
  }
  EXPECT_EQ(found, 1);
}

// A kernel's work (what a Chakra trace's num_ops and tensor_size carry) is the roofline's count
// whatever timed it: a profile, a micro-batched plan or the roofline itself.
TEST(NetworkMicroBatchPlan, AnOpsWorkDoesNotDependOnWhatTimedIt) {
  const Network net;
  const ComputeCostModel profiled(
      test_device(), &net.profiles,
      MicroBatchingSection{MicroBatchPolicy::power_of_two, MicroBatchMode::per_layer, 4 * kMiB});
  const ComputeCostModel roofline(test_device(), nullptr, 4 * kMiB);
  const auto work = [](const ComputeCostModel& costs, const Network& network) {
    const auto programs = build_step_programs(network.model, network.plan, costs, {});
    for (const auto& op : programs[0].ops) {
      if (op.label == "conv1 forward") return std::pair{op.flops, op.memory_bytes};
    }
    return std::pair{0.0, 0.0};
  };
  const auto [flops, bytes] = work(roofline, net);
  EXPECT_GT(flops, 1e9);  // CosmoFlow-64's conv1 at 8 samples: GFLOPs
  EXPECT_GT(bytes, 0);
  EXPECT_EQ(work(profiled, net), std::pair(flops, bytes));
}

TEST(NetworkMicroBatchPlan, WholeNetworkSharesTheBudget) {
  const Network net;
  // Per layer, 6 MiB lets each kernel take 2 x 4 fast (4 MiB each, 8 MiB together).
  const auto per_layer =
      net.planned(MicroBatchPolicy::power_of_two, MicroBatchMode::per_layer, 6 * kMiB);
  const auto conv1 = *net.model.index_of("conv1");
  const auto conv2 = *net.model.index_of("conv2");
  EXPECT_EQ(describe(per_layer.find(conv2, Direction::forward)->plan), "2 x 4 fast");
  // As a whole-network budget, 6 MiB holds one 4 MiB and one 2 MiB workspace: 0.82 + 0.84 ms.
  const auto whole =
      net.planned(MicroBatchPolicy::power_of_two, MicroBatchMode::whole_network, 6 * kMiB);
  const auto& a = whole.find(conv1, Direction::forward)->plan;
  const auto& b = whole.find(conv2, Direction::forward)->plan;
  EXPECT_NEAR(a.seconds() + b.seconds(), 1.66 * kMs, 1e-15);
  EXPECT_DOUBLE_EQ(a.workspace_bytes() + b.workspace_bytes(), 6 * kMiB);
  EXPECT_DOUBLE_EQ(whole.workspace_bytes(), 6 * kMiB);
  EXPECT_TRUE(whole.limit_met());
  // The undivided baseline under the same budget: both slow (the fast one needs 8 MiB).
  EXPECT_NEAR(*whole.find(conv1, Direction::forward)->undivided_seconds +
                  *whole.find(conv2, Direction::forward)->undivided_seconds,
              160.2 * kMs, 1e-12);
}

TEST(NetworkMicroBatchPlan, ImpossibleBudgetIsFlaggedNotAnError) {
  const Network net;
  const auto plan = net.planned(MicroBatchPolicy::power_of_two, MicroBatchMode::whole_network, 0);
  EXPECT_FALSE(plan.limit_met());
  // The least workspace: 8 x 1 slow (1 byte) for both profiled kernels.
  EXPECT_EQ(describe(plan.find(*net.model.index_of("conv1"), Direction::forward)->plan),
            "8 x 1 slow");
  EXPECT_DOUBLE_EQ(plan.workspace_bytes(), 2);
}

TEST(NetworkMicroBatchPlan, JsonCarriesTotalsAndEveryKernel) {
  const Network net;
  const auto plan =
      net.planned(MicroBatchPolicy::power_of_two, MicroBatchMode::per_layer, 4 * kMiB);
  const auto json = to_json(plan);
  EXPECT_EQ(json["policy"], "power_of_two");
  EXPECT_EQ(json["mode"], "per_layer");
  EXPECT_DOUBLE_EQ(json["conv_s"].get<double>(), plan.seconds());
  EXPECT_DOUBLE_EQ(json["speedup"].get<double>(), *plan.speedup());
  EXPECT_EQ(json["kernels"].size(), plan.kernels.size());
  EXPECT_EQ(json["kernels"][0]["layer"], "conv1");
  EXPECT_EQ(json["kernels"][0]["micro_batches"].size(), 2u);
  EXPECT_EQ(json["kernels"][0]["micro_batches"][0]["algorithm"], "fast");
}

TEST(NetworkMicroBatchPlan, DescribePrintsThePlanPerKernelAndTheTotal) {
  const auto loaded = load_scenario_text(R"(name: planned
model: {zoo: cosmoflow, options: {width: 64}, mini_batch: 8}
parallelism: {spatial: {grid: [1, 1, 1]}}
kernels: {micro_batching: {policy: power_of_two, mode: per_layer, workspace_limit: 4 MiB}}
platform: {preset: v100_node, nodes: 1}
)",
                                         "planned.yaml", ".");
  const auto conv1 = *loaded.model.index_of("conv1");
  const auto& layer = loaded.model.layers()[conv1];
  const auto& shard = loaded.points[0].plan.layers[conv1];
  ProfileDatabase profiles;
  for (std::int64_t b : {4, 8}) {
    profiles.add({.device = loaded.cluster.gpu.model,
                  .op = "conv",
                  .direction = Direction::forward,
                  .shape = kernel_shape_key(layer.layer, shard.local_inputs, shard.local_output),
                  .micro_batch = b,
                  .algorithm = "fft",
                  .time_seconds = 1e-3 * static_cast<double>(b),
                  .workspace_bytes = static_cast<double>(b) * kMiB});
  }
  profiles.add({.device = loaded.cluster.gpu.model,
                .op = "conv",
                .direction = Direction::forward,
                .shape = kernel_shape_key(layer.layer, shard.local_inputs, shard.local_output),
                .micro_batch = 8,
                .algorithm = "gemm",
                .time_seconds = 0.016});
  const auto text = describe_scenario(loaded, {.point = 0, .layers = true, .profiles = &profiles});
  EXPECT_NE(text.find("Micro-batching plan (policy power_of_two, per_layer, workspace limit per "
                      "kernel 4.00 MiB"),
            std::string::npos)
      << text;
  // conv1 forward: 2 x 4 fft (8 ms, 4 MiB) against gemm undivided (16 ms): 2x.
  EXPECT_NE(text.find("2 x 4 fft"), std::string::npos) << text;
  EXPECT_NE(text.find("2.00x"), std::string::npos) << text;
  EXPECT_NE(text.find("(no profile: roofline)"), std::string::npos);
  EXPECT_NE(text.find("Conv kernels: "), std::string::npos);
}

TEST(NetworkMicroBatchPlan, ResultsRecordThePlanOfEveryPointAlsoWhenResumed) {
  const auto loaded = load_scenario_text(R"(name: recorded
model: {zoo: cosmoflow, options: {width: 64}, mini_batch: 4}
kernels: {micro_batching: {policy: all, mode: whole_network, workspace_limit: 1 GiB}}
platform: {preset: v100_node}
sweep: {scaling: weak, gpus: [1, 2]}
)",
                                         "recorded.yaml", ".");
  const auto directory = std::filesystem::temp_directory_path() /
                         ("tessera-plan-results-" + std::to_string(::getpid()));
  SweepRunOptions options;
  options.backend = "sim";
  options.output_directory = directory.string();
  auto runner = [&](const SweepPoint& point) {
    PointResult result;
    result.scenario = "recorded";
    result.point = static_cast<std::int64_t>(point.index);
    result.backend = "sim";
    result.gpus = point.config.gpus();
    result.data = point.config.data;
    result.spatial_grid = grid_to_string(point.config.spatial_grid);
    result.mini_batch = point.config.mini_batch;
    return result;
  };
  for (int run = 0; run < 2; ++run) {  // the second run keeps both points from the first
    const auto result = run_sweep(loaded, options, runner);
    EXPECT_EQ(result.resumed, run == 0 ? 0u : 2u);
    std::ifstream in(result.json_path);
    const auto json = nlohmann::json::parse(in);
    ASSERT_EQ(json["points"].size(), 2u);
    for (const auto& point : json["points"]) {
      const auto& plan = point["micro_batching"];
      EXPECT_EQ(plan["policy"], "all");
      EXPECT_EQ(plan["mode"], "whole_network");
      EXPECT_GT(plan["conv_s"].get<double>(), 0);
      EXPECT_DOUBLE_EQ(plan["speedup"].get<double>(), 1.0);  // roofline: nothing to plan
      EXPECT_EQ(plan["kernels"][0]["provenance"], "roofline");
      EXPECT_EQ(plan["kernels"][0]["batch"], 4);
    }
  }
  std::filesystem::remove_all(directory);
}

// A pipeline runs its kernels one micro-batch at a time, and so does the plan every caller gets
// (the real backend executed the whole mini-batch's plan, at roofline, while the simulator
// played the micro-batch's from the profile).
TEST(NetworkMicroBatchPlan, APipelinePlansItsKernelsAtTheMicroBatch) {
  const Network net;
  ParallelConfig config;
  config.mini_batch = 8;
  config.model_degree = 2;
  config.micro_batches = 4;
  const ShardPlan pipeline = plan_shards(net.model, config, "", {});
  const ComputeCostModel costs(
      test_device(), &net.profiles,
      MicroBatchingSection{MicroBatchPolicy::power_of_two, MicroBatchMode::per_layer, 4 * kMiB});
  const auto plan = plan_network(net.model, pipeline, costs, DType::float32);
  ASSERT_FALSE(plan.kernels.empty());
  for (const auto& kernel : plan.kernels) EXPECT_EQ(kernel.batch, 2) << kernel.layer_name;
  EXPECT_EQ(plan.kernels.back().stage, 1);
  const auto* conv1 = plan.find(*net.model.index_of("conv1"), Direction::forward);
  ASSERT_NE(conv1, nullptr);
  EXPECT_EQ(conv1->provenance, Provenance::profile);
}

}  // namespace
}  // namespace tessera
