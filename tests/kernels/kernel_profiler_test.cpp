#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "cuda_test_support.hpp"
#include "profile/kernel_launch.hpp"
#include "tessera/core/cost/cost_model.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/kernels/convolution_kernels.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/profile/kernel_profiler.hpp"

namespace tessera::kernels {
namespace {

std::vector<KernelToProfile> small_cnn_kernels() {
  return kernels_to_profile(
      load_scenario(std::string(TESSERA_TEST_DATA_DIR) + "/scenarios/good/profile_small_cnn.yaml"));
}

ProfilerOptions quick() {
  ProfilerOptions options;
  options.warmup_runs = 1;
  options.min_runs = 1;
  options.max_runs = 1;
  options.seconds_per_measurement = 0;
  return options;
}

TEST(KernelProfiler, MeasuresEveryAlgorithmAtEveryMicroBatchSize) {
  auto device = open_cpu_device();
  std::vector<KernelToProfile> conv1;
  for (const auto& kernel : small_cnn_kernels()) {
    if (kernel.layer.name == "conv1") conv1.push_back(kernel);
  }
  ASSERT_EQ(conv1.size(), 3u);  // forward, backward-data, backward-filter
  ProfileDatabase database;
  profile_kernels(*device, conv1, quick(), database);
  for (const auto& kernel : conv1) {
    const auto rows = database.entries_for(device->info().name, "conv", kernel.direction,
                                           kernel.shape, DType::float32);
    std::set<std::int64_t> sizes;
    for (const auto& row : rows) {
      sizes.insert(row.micro_batch);
      if (row.ok) {
        EXPECT_GT(row.time_seconds, 0) << row.algorithm;
      }
    }
    EXPECT_EQ(sizes, (std::set<std::int64_t>{1, 2, 4})) << to_string(kernel.direction);
    // Every algorithm the library offers at the full batch has its row.
    const auto offered = device->convolutions().algorithms({.in_channels = 3,
                                                            .out_channels = 16,
                                                            .input_spatial = {32, 32},
                                                            .output_spatial = {32, 32},
                                                            .kernel = {3, 3},
                                                            .stride = {1, 1},
                                                            .padding = {1, 1},
                                                            .dilation = {1, 1}},
                                                           4, kernel.direction);
    std::size_t at_full_batch = 0;
    for (const auto& row : rows) at_full_batch += row.micro_batch == 4 ? 1 : 0;
    EXPECT_EQ(at_full_batch, offered.size()) << to_string(kernel.direction);
  }
}

// A resumed profile measures only the sizes it lacks: a row of any algorithm (failed ones too)
// makes a size present, and the same shape at another batch is still missing.
TEST(KernelProfiler, MissingMicroBatchesAreTheSizesWithoutARow) {
  KernelToProfile kernel;
  kernel.op = "conv";
  kernel.shape = "conv k3 s1 p1 d1 g1 in 4x8 out 4x8";
  kernel.direction = Direction::backward_data;
  ProfileDatabase database;
  const auto row = [&](const std::string& device, std::int64_t size, bool ok,
                       Direction direction = Direction::backward_data) {
    database.add({.device = device,
                  .op = "conv",
                  .direction = direction,
                  .shape = kernel.shape,
                  .micro_batch = size,
                  .algorithm = "a",
                  .time_seconds = 1e-3,
                  .ok = ok});
  };
  row("cpu", 2, true);
  row("cpu", 4, false);
  row("other", 1, true);
  row("cpu", 1, true, Direction::forward);
  EXPECT_EQ(missing_micro_batches(database, "cpu", kernel, {1, 2, 4, 8}),
            (std::vector<std::int64_t>{1, 8}));
  EXPECT_TRUE(missing_micro_batches(database, "cpu", kernel, {2, 4}).empty());
}

// A resumed profile also measures an algorithm the library offers that the earlier run has no
// row of (a newer library's; here, one an earlier --skip-algorithms left out), and only that.
TEST(KernelProfiler, AResumedProfileMeasuresTheAlgorithmsItLacksAndNoOther) {
  auto device = open_cpu_device();
  std::vector<KernelToProfile> conv1;
  for (const auto& kernel : small_cnn_kernels()) {
    if (kernel.layer.name == "conv1" && kernel.direction == Direction::forward) {
      conv1.push_back(kernel);
    }
  }
  ASSERT_EQ(conv1.size(), 1u);
  const KernelToProfile& kernel = conv1.front();
  const std::string name = device->info().name;
  const auto offered = algorithms_for(*device, kernel, 4, kernel.direction);
  ASSERT_GE(offered.size(), 2u);
  ProfilerOptions skipping = quick();
  skipping.skipped_algorithm_prefixes = {offered.front().name};
  ProfileDatabase earlier;
  profile_kernels(*device, conv1, skipping, earlier);
  ASSERT_FALSE(measured_rows(earlier, name, kernel).contains({4, offered.front().name}));
  const std::size_t earlier_rows = earlier.size();

  // With the same skip nothing is left; without it, every size lacks the skipped algorithm.
  EXPECT_TRUE(sizes_to_measure(*device, earlier, kernel, kernel.micro_batches, skipping).empty());
  const auto sizes = sizes_to_measure(*device, earlier, kernel, kernel.micro_batches, quick());
  EXPECT_EQ(sizes, kernel.micro_batches);

  KernelToProfile resumed = kernel;
  resumed.micro_batches = sizes;
  ProfileDatabase new_rows;
  profile_kernels(*device, {resumed}, quick(), new_rows, {}, &earlier);
  for (const ProfileEntry& row : new_rows.rows()) {
    EXPECT_TRUE(row.algorithm.starts_with(offered.front().name)) << row.algorithm;
  }
  EXPECT_TRUE(measured_rows(new_rows, name, kernel).contains({4, offered.front().name}));
  for (const ProfileEntry& row : new_rows.rows()) earlier.add(row);
  EXPECT_EQ(earlier.size(), earlier_rows + new_rows.size());
  EXPECT_TRUE(sizes_to_measure(*device, earlier, kernel, kernel.micro_batches, quick()).empty());
}

TEST(KernelProfiler, OtherLayersHaveOneAlgorithmAndLossesComputeTheirGradientInForward) {
  auto device = open_cpu_device();
  std::vector<KernelToProfile> chosen;
  for (const auto& kernel : small_cnn_kernels()) {
    if (kernel.layer.name == "relu1" || kernel.layer.name == "loss" || kernel.layer.name == "bn1") {
      chosen.push_back(kernel);
    }
  }
  ProfileDatabase database;
  profile_kernels(*device, chosen, quick(), database);
  for (const auto& kernel : chosen) {
    const auto rows = database.entries_for(device->info().name, kernel.op, kernel.direction,
                                           kernel.shape, DType::float32);
    ASSERT_EQ(rows.size(), 1u) << kernel.layer.name;
    EXPECT_TRUE(rows[0].ok);
    const bool fused =
        (kernel.layer.name == "loss" && kernel.direction != Direction::forward) ||
        (kernel.layer.name == "bn1" && kernel.direction == Direction::backward_filter);
    EXPECT_EQ(rows[0].algorithm, fused ? "fused" : "default") << kernel.layer.name;
    EXPECT_EQ(rows[0].time_seconds > 0, !fused) << kernel.layer.name;
  }
}

TEST(KernelProfiler, AnAlgorithmOverTheWorkspaceCapIsRecordedAsNotRun) {
  auto device = open_cpu_device();
  std::vector<KernelToProfile> conv2;
  for (const auto& kernel : small_cnn_kernels()) {
    if (kernel.layer.name == "conv2" && kernel.direction == Direction::forward) {
      conv2.push_back(kernel);
    }
  }
  ASSERT_EQ(conv2.size(), 1u);
  ProfilerOptions options = quick();
  options.max_workspace_bytes = 0;
  ProfileDatabase database;
  profile_kernels(*device, conv2, options, database);
  const auto rows = database.entries_for(device->info().name, "conv", Direction::forward,
                                         conv2[0].shape, DType::float32);
  ASSERT_FALSE(rows.empty());
  for (const auto& row : rows) {
    EXPECT_EQ(row.ok, row.workspace_bytes == 0) << row.algorithm;
    if (!row.ok) {
      EXPECT_EQ(row.time_seconds, 0);
    }
  }
}

// On a GPU: CosmoFlow-512's unpartitioned conv1 has 16 x 512^3 = 2^31 output elements per
// sample, outside cuDNN's int strides. That shape is one refused row, and the kernels after it are
// still measured (the H100 campaign of 2026-11-26 stopped there instead).
class CudaKernelProfiler : public testing::WithCudaDevice<> {};

TEST_F(CudaKernelProfiler, AShapeCuDnnCannotDescribeIsOneRefusedRowAndTheRestIsMeasured) {
  const auto all = kernels_to_profile(load_scenario(std::string(TESSERA_SOURCE_DIR) +
                                                    "/scenarios/cosmoflow512_profile_shards.yaml"));
  std::vector<KernelToProfile> chosen;
  for (const auto& kernel : all) {
    const bool whole_conv1 = kernel.layer.name == "conv1" && chosen.empty();
    const bool small_pool = kernel.op == "pool" && kernel.output.elements() < (1 << 24);
    if ((whole_conv1 || (small_pool && chosen.size() == 1)) &&
        kernel.direction == Direction::forward) {
      chosen.push_back(kernel);
    }
  }
  ASSERT_EQ(chosen.size(), 2u);
  ASSERT_GE(chosen[0].output.elements(), std::int64_t{1} << 31);
  ProfileDatabase database;
  profile_kernels(gpu(), chosen, quick(), database);
  const auto refused = database.entries_for(gpu().info().name, "conv", Direction::forward,
                                            chosen[0].shape, DType::float32);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].algorithm, kRefusedAlgorithm);
  EXPECT_FALSE(refused[0].ok);
  const auto measured = database.entries_for(gpu().info().name, "pool", Direction::forward,
                                             chosen[1].shape, DType::float32);
  ASSERT_EQ(measured.size(), 1u);
  EXPECT_TRUE(measured[0].ok);
  EXPECT_GT(measured[0].time_seconds, 0);
}

TEST(KernelProfiler, CopiesAreTimedPerDirectionAndKind) {
  auto device = open_cpu_device();
  ProfileDatabase database;
  profile_copies(*device, {1e6}, quick(), database);
  for (const char* op : {"copy_h2d_pinned", "copy_d2h_pinned", "copy_h2d_pageable",
                         "copy_d2h_pageable", "copy_d2d"}) {
    const auto rows = database.entries_for(device->info().name, op, Direction::forward,
                                           transfer_shape(1e6), DType::float32);
    ASSERT_EQ(rows.size(), 1u) << op;
    EXPECT_GT(rows[0].time_seconds, 0) << op;
  }
}

// The flush between runs is sized from the device's last-level cache and leaves the runs as they
// were: the median of the same number of runs.
TEST(KernelProfiler, CacheFlushIsTwiceTheLastLevelCacheAndKeepsTheRuns) {
  auto device = open_cpu_device();
  const double cache = device->info().cache_bytes;
  if (cache > 0) {
    EXPECT_EQ(cache_flush_bytes_for(*device), 2 * cache);
  } else {
    EXPECT_EQ(cache_flush_bytes_for(*device), 256.0 * 1024 * 1024);
  }
  ProfilerOptions options = quick();
  options.min_runs = options.max_runs = 3;
  options.seconds_per_measurement = 1;  // a budget the empty work never exhausts
  options.caches = RunCaches::flushed;
  options.cache_flush_bytes = 1 << 20;
  int runs = 0, shadows = 0;
  EXPECT_GE(median_seconds(
                *device, [&] { ++runs; }, options, [&] { ++shadows; }),
            0);
  EXPECT_EQ(runs, options.warmup_runs + 3);
  EXPECT_EQ(shadows, 0);  // flushed: the buffer alone
}

// Step-like caches: before every run the buffer is written and then the kernel runs on its
// second set of operands, once, outside the timing; warm runs get neither. A CPU's runs are
// step-like unless timed warm, with the buffer twice its last-level cache.
TEST(KernelProfiler, StepLikeRunsFollowARunOnASecondSetOfOperands) {
  auto device = open_cpu_device();
  ProfilerOptions options = quick();
  set_cold_caches(options, *device);
  EXPECT_EQ(options.caches, RunCaches::step_like);
  EXPECT_EQ(options.cache_flush_bytes, cache_flush_bytes_for(*device));
  EXPECT_TRUE(runs_shadow(options.caches));
  options.min_runs = options.max_runs = 3;
  options.seconds_per_measurement = 1;
  options.cache_flush_bytes = 1 << 20;
  std::vector<char> order;
  median_seconds(
      *device, [&] { order.push_back('r'); }, options, [&] { order.push_back('s'); });
  EXPECT_EQ(std::string(order.begin(), order.end()), "srsrsrsr");  // the warm-up and 3 runs
  options.caches = RunCaches::warm;
  EXPECT_FALSE(runs_shadow(options.caches));
  order.clear();
  median_seconds(
      *device, [&] { order.push_back('r'); }, options, [&] { order.push_back('s'); });
  EXPECT_EQ(std::string(order.begin(), order.end()), "rrrr");
}

// A whole profile with step-like caches measures the same rows as with warm ones (the second
// set of operands is the profiler's own business).
TEST(KernelProfiler, StepLikeProfilesMeasureEveryRow) {
  auto device = open_cpu_device();
  std::vector<KernelToProfile> kernels;
  for (const auto& kernel : small_cnn_kernels()) {
    if (kernel.layer.name == "conv1") kernels.push_back(kernel);
  }
  ProfileDatabase warm, step_like;
  profile_kernels(*device, kernels, quick(), warm);
  ProfilerOptions options = quick();
  set_cold_caches(options, *device);
  options.cache_flush_bytes = 1 << 20;
  profile_kernels(*device, kernels, options, step_like);
  ASSERT_EQ(step_like.size(), warm.size());
  const auto warm_rows = warm.rows();
  const auto rows = step_like.rows();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].algorithm, warm_rows[i].algorithm);
    EXPECT_EQ(rows[i].ok, warm_rows[i].ok) << rows[i].shape << " " << rows[i].algorithm;
    if (rows[i].ok && rows[i].algorithm != "fused") {
      EXPECT_GT(rows[i].time_seconds, 0);
    }
  }
}

// Each optimizer's update gets one row under the key the cost model looks up, and the cost model
// then times the step program's update by it.
TEST(KernelProfiler, OptimizerUpdatesAreTimedUnderTheCostModelsKey) {
  auto device = open_cpu_device();
  ProfileDatabase database;
  std::vector<ParameterKernelToProfile> updates;
  for (const auto optimizer : {Optimizer::sgd, Optimizer::momentum, Optimizer::adam}) {
    updates.push_back({.optimizer = optimizer,
                       .parameters = 100000,
                       .op = update_op(optimizer),
                       .shape = parameters_shape(100000)});
  }
  profile_parameter_kernels(*device, updates, quick(), database);
  DeviceRoofline roofline;
  roofline.device = device->info().name;
  roofline.fp32_flops_per_second = 1e12;
  roofline.memory_bandwidth_bytes_per_second = 1e11;
  const ComputeCostModel costs(roofline, &database, 0.0);
  for (const auto& update : updates) {
    const auto rows = database.entries_for(device->info().name, update.op, Direction::forward,
                                           update.shape, DType::float32);
    ASSERT_EQ(rows.size(), 1u) << update.op;
    EXPECT_GT(rows[0].time_seconds, 0) << update.op;
    const auto estimate = costs.optimizer_time(update.parameters, DType::float32, update.optimizer);
    EXPECT_EQ(estimate.provenance, Provenance::profile) << update.op;
    EXPECT_EQ(estimate.seconds, rows[0].time_seconds) << update.op;
  }
  // Another parameter count has no row: the roofline.
  EXPECT_EQ(costs.optimizer_time(100001, DType::float32, Optimizer::adam).provenance,
            Provenance::roofline);
}

// A pipeline's gradient sum (one layer's gradients added into the step's) gets its row the same
// way, and the cost model times the step program's gradient_sum ops by it.
TEST(KernelProfiler, GradientSumsAreTimedUnderTheCostModelsKey) {
  auto device = open_cpu_device();
  ProfileDatabase database;
  const ParameterKernelToProfile sum{.kernel = ParameterKernel::gradient_sum,
                                     .parameters = 65536,
                                     .op = gradient_sum_op(),
                                     .shape = parameters_shape(65536)};
  profile_parameter_kernels(*device, {sum}, quick(), database);
  const auto rows = database.entries_for(device->info().name, sum.op, Direction::forward, sum.shape,
                                         DType::float32);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_GT(rows[0].time_seconds, 0);
  DeviceRoofline roofline;
  roofline.device = device->info().name;
  roofline.fp32_flops_per_second = 1e12;
  roofline.memory_bandwidth_bytes_per_second = 1e11;
  const ComputeCostModel costs(roofline, &database, 0.0);
  const auto estimate = costs.gradient_sum_time(65536, DType::float32);
  EXPECT_EQ(estimate.provenance, Provenance::profile);
  EXPECT_EQ(estimate.seconds, rows[0].time_seconds);
  // The update of as many parameters is another kernel: not this row.
  EXPECT_EQ(costs.optimizer_time(65536, DType::float32, Optimizer::adam).provenance,
            Provenance::roofline);
}

}  // namespace
}  // namespace tessera::kernels
