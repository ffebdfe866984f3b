// The per-GPU memory model against hand-computed components of tiny models.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/core/graph_builder.hpp"
#include "tessera/core/memory_estimate.hpp"
#include "tessera/core/parallel_strategy.hpp"

namespace tessera {
namespace {

// input 1x8x8 -> conv 4 3x3 pad 1 (bias) -> relu -> fc 10 -> softmax cross-entropy.
//
// Parameters: conv 1*4*9 + 4 = 40, fc 256*10 + 10 = 2570; 2610 in all, 10440 bytes in float32.
// Per sample (elements): input 64, conv 256, relu 256, fc 10, loss 10.
// Kept for backward: input (read by conv), relu (its own output, and read by fc), loss (its own
// output); not conv's output (ReLU needs only its output) nor fc's (softmax needs only its output).
// Largest gradient pair: relu, 256 + 256 elements.
ModelGraph tiny_model() {
  GraphBuilder b("tiny");
  auto x = b.input("input", 1, {8, 8});
  x = b.conv("conv", x, {.out_channels = 4, .kernel = {3}, .padding = {1}, .bias = true});
  x = b.relu("relu", x);
  x = b.fully_connected("fc", x, 10);
  b.softmax_cross_entropy("loss", x);
  return std::move(b).build();
}

ShardPlan unsplit_plan(const ModelGraph& model, std::int64_t mini_batch,
                       std::int64_t model_degree = 1,
                       const std::vector<std::string>& stage_starts = {}) {
  ParallelConfig config;
  config.mini_batch = mini_batch;
  config.model_degree = model_degree;
  return plan_shards(model, config, "", stage_starts);
}

MemoryInputs inputs(OffloadPolicy offload = OffloadPolicy::none, double capacity = 1e12) {
  MemoryInputs in;
  in.dtype = DType::float32;
  in.optimizer = Optimizer::adam;
  in.offload = offload;
  in.workspace_bytes = 1000;
  in.prefetch = true;
  in.capacity_bytes = capacity;
  return in;
}

constexpr double kWeights = 2610 * 4;
constexpr double kBatch = 2;
constexpr double kInputBytes = kBatch * 64 * 4;  // 512
constexpr double kReluBytes = kBatch * 256 * 4;  // 2048
constexpr double kLossBytes = kBatch * 10 * 4;   // 80
constexpr double kKept = kInputBytes + kReluBytes + kLossBytes;
constexpr double kTransient = 2 * kReluBytes;

double sum_of_components(const MemoryEstimate& e) {
  return e.weights_bytes + e.weight_gradients_bytes + e.optimizer_state_bytes +
         e.kept_activations_bytes + e.offload_staging_bytes + e.transient_bytes +
         e.workspace_bytes + e.input_buffers_bytes;
}

TEST(MemoryEstimate, TinyModelEveryComponentByHand) {
  const auto model = tiny_model();
  const auto plan = unsplit_plan(model, 2);
  const auto e = estimate_memory(model, plan, inputs());
  EXPECT_EQ(e.weights_bytes, kWeights);
  EXPECT_EQ(e.weight_gradients_bytes, kWeights);
  EXPECT_EQ(e.optimizer_state_bytes, 2 * kWeights);  // Adam: first and second moments
  EXPECT_EQ(e.kept_activations_bytes, kKept);
  EXPECT_EQ(e.offload_staging_bytes, 0);
  EXPECT_EQ(e.transient_bytes, kTransient);
  EXPECT_EQ(e.workspace_bytes, 1000);
  EXPECT_EQ(e.input_buffers_bytes, 2 * kInputBytes);  // current and prefetched sample
  EXPECT_EQ(e.total_bytes, 4 * kWeights + kKept + kTransient + 1000 + 2 * kInputBytes);
  EXPECT_EQ(e.total_bytes, 50520);
  EXPECT_EQ(e.total_bytes, sum_of_components(e));
  EXPECT_EQ(e.capacity_bytes, 1e12);
  EXPECT_TRUE(e.fits);
  EXPECT_EQ(e.worst_stage, 0);
  EXPECT_EQ(e.offload_applied, OffloadPolicy::none);
}

TEST(MemoryEstimate, KeptActivationBytesPerLayer) {
  const auto model = tiny_model();
  const auto plan = unsplit_plan(model, 2);
  const std::vector<double> expected{kInputBytes, 0, kReluBytes, 0, kLossBytes};
  ASSERT_EQ(model.layers().size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(kept_activation_bytes(model, plan, i, DType::float32), expected[i])
        << model.layers()[i].layer.name;
    EXPECT_EQ(kept_activation_bytes(model, plan, i, DType::float16), expected[i] / 2)
        << model.layers()[i].layer.name;
  }
}

TEST(MemoryEstimate, WithoutPrefetchOneInputBuffer) {
  const auto model = tiny_model();
  auto in = inputs();
  in.prefetch = false;
  const auto e = estimate_memory(model, unsplit_plan(model, 2), in);
  EXPECT_EQ(e.input_buffers_bytes, kInputBytes);
  EXPECT_EQ(e.total_bytes, 50520 - kInputBytes);
}

TEST(MemoryEstimate, OptimizerStates) {
  const auto model = tiny_model();
  const auto plan = unsplit_plan(model, 2);
  auto in = inputs();
  in.optimizer = Optimizer::sgd;
  EXPECT_EQ(estimate_memory(model, plan, in).optimizer_state_bytes, 0);
  in.optimizer = Optimizer::momentum;
  EXPECT_EQ(estimate_memory(model, plan, in).optimizer_state_bytes, kWeights);
}

TEST(MemoryEstimate, HalfPrecisionHalvesEverythingButWorkspace) {
  const auto model = tiny_model();
  const auto plan = unsplit_plan(model, 2);
  auto in = inputs();
  in.dtype = DType::float16;
  const auto e = estimate_memory(model, plan, in);
  EXPECT_EQ(e.weights_bytes, kWeights / 2);
  EXPECT_EQ(e.kept_activations_bytes, kKept / 2);
  EXPECT_EQ(e.transient_bytes, kTransient / 2);
  EXPECT_EQ(e.input_buffers_bytes, kInputBytes);
  EXPECT_EQ(e.workspace_bytes, 1000);
  EXPECT_EQ(e.total_bytes, (50520 - 1000) / 2 + 1000);
}

TEST(MemoryEstimate, ActivationsScaleWithTheMiniBatch) {
  const auto model = tiny_model();
  const auto one = estimate_memory(model, unsplit_plan(model, 1), inputs());
  const auto eight = estimate_memory(model, unsplit_plan(model, 8), inputs());
  EXPECT_EQ(eight.weights_bytes, one.weights_bytes);
  EXPECT_EQ(eight.kept_activations_bytes, 8 * one.kept_activations_bytes);
  EXPECT_EQ(eight.transient_bytes, 8 * one.transient_bytes);
  EXPECT_EQ(eight.input_buffers_bytes, 8 * one.input_buffers_bytes);
}

TEST(MemoryEstimate, OffloadAllMovesEveryKeptActivation) {
  const auto model = tiny_model();
  const auto e = estimate_memory(model, unsplit_plan(model, 2), inputs(OffloadPolicy::all));
  EXPECT_EQ(e.kept_activations_bytes, 0);
  EXPECT_EQ(e.offload_staging_bytes, 2 * kReluBytes);  // two buffers of the largest
  EXPECT_EQ(e.offload_applied, OffloadPolicy::all);
  EXPECT_EQ(e.weights_bytes, kWeights);
  EXPECT_EQ(e.transient_bytes, kTransient);
  EXPECT_EQ(e.total_bytes, sum_of_components(e));
}

TEST(MemoryEstimate, OffloadConvMovesOnlyWhatConvolutionsRead) {
  const auto model = tiny_model();
  const auto e = estimate_memory(model, unsplit_plan(model, 2), inputs(OffloadPolicy::conv));
  EXPECT_EQ(e.kept_activations_bytes, kKept - kInputBytes);  // only conv reads the input
  EXPECT_EQ(e.offload_staging_bytes, 2 * kInputBytes);
  EXPECT_EQ(e.offload_applied, OffloadPolicy::conv);
  EXPECT_EQ(e.total_bytes, sum_of_components(e));
}

TEST(MemoryEstimate, FitsComparesWithCapacity) {
  const auto model = tiny_model();
  const auto plan = unsplit_plan(model, 2);
  EXPECT_TRUE(estimate_memory(model, plan, inputs(OffloadPolicy::none, 50520)).fits);
  EXPECT_FALSE(estimate_memory(model, plan, inputs(OffloadPolicy::none, 50519)).fits);
}

// Worst of two stages: stage 0 holds input, conv, relu; stage 1 fc and loss.
TEST(MemoryEstimate, ModelParallelReportsTheWorstStage) {
  const auto model = tiny_model();
  const auto plan = unsplit_plan(model, 2, 2, {"fc"});
  const auto e = estimate_memory(model, plan, inputs());
  // Stage 1: fc weights 2570 floats, the loss output kept, gradient pair of fc (10 + 256).
  EXPECT_EQ(e.worst_stage, 1);
  EXPECT_EQ(e.weights_bytes, 2570 * 4);
  EXPECT_EQ(e.optimizer_state_bytes, 2 * 2570 * 4);
  EXPECT_EQ(e.kept_activations_bytes, kLossBytes);
  EXPECT_EQ(e.transient_bytes, kBatch * (10 + 256) * 4);
  EXPECT_EQ(e.input_buffers_bytes, 0);  // samples arrive at stage 0
  EXPECT_EQ(e.total_bytes, 4 * 2570 * 4 + kLossBytes + kBatch * 266 * 4 + 1000);

  // With a much larger input buffer stage 0 becomes the worst.
  auto in = inputs();
  in.workspace_bytes = 0;
  const auto stage0 = estimate_memory(model, unsplit_plan(model, 64, 2, {"fc"}), in);
  // Stage 0 at batch 64: weights 40, kept input+relu, pair 2*256, two input buffers.
  const double stage0_total = 4 * 40 * 4 + 64 * (64 + 256) * 4 + 64 * 512 * 4 + 2 * 64 * 64 * 4;
  const double stage1_total = 4 * 2570 * 4 + 64 * 10 * 4 + 64 * 266 * 4;
  ASSERT_GT(stage0_total, stage1_total);
  EXPECT_EQ(stage0.worst_stage, 0);
  EXPECT_EQ(stage0.total_bytes, stage0_total);
}

// ---------------------------------------------------------------------------------------------
// vDNN's dynamic policy

// input 1x32x32 -> (conv 8 3x3 pad 1 -> relu) x 3 -> fc 10 -> loss: offloading pays off because
// many activations of the same size are kept.
ModelGraph deep_model() {
  GraphBuilder b("deep");
  auto x = b.input("input", 1, {32, 32});
  for (int i = 1; i <= 3; ++i) {
    x = b.conv("conv" + std::to_string(i), x, {.out_channels = 8, .kernel = {3}, .padding = {1}});
    x = b.relu("relu" + std::to_string(i), x);
  }
  x = b.fully_connected("fc", x, 10);
  b.softmax_cross_entropy("loss", x);
  return std::move(b).build();
}

TEST(MemoryEstimate, DeepModelOffloadByHand) {
  const auto model = deep_model();
  const auto plan = unsplit_plan(model, 1);
  const double input = 1024 * 4, relu = 8 * 1024 * 4, loss = 10 * 4;
  const auto none = estimate_memory(model, plan, inputs(OffloadPolicy::none));
  const auto conv = estimate_memory(model, plan, inputs(OffloadPolicy::conv));
  const auto all = estimate_memory(model, plan, inputs(OffloadPolicy::all));
  EXPECT_EQ(none.kept_activations_bytes, input + 3 * relu + loss);
  // relu3 is read by fc, not a convolution; the loss output by nobody.
  EXPECT_EQ(conv.kept_activations_bytes, relu + loss);
  EXPECT_EQ(conv.offload_staging_bytes, 2 * relu);
  EXPECT_EQ(all.kept_activations_bytes, 0);
  EXPECT_EQ(all.offload_staging_bytes, 2 * relu);
  EXPECT_LT(all.total_bytes, conv.total_bytes);
  EXPECT_LT(conv.total_bytes, none.total_bytes);
}

TEST(MemoryEstimate, DynamicPicksTheLeastOffloadingThatFits) {
  const auto model = deep_model();
  const auto plan = unsplit_plan(model, 1);
  const double none = estimate_memory(model, plan, inputs(OffloadPolicy::none)).total_bytes;
  const double conv = estimate_memory(model, plan, inputs(OffloadPolicy::conv)).total_bytes;
  const double all = estimate_memory(model, plan, inputs(OffloadPolicy::all)).total_bytes;

  const auto roomy = estimate_memory(model, plan, inputs(OffloadPolicy::dyn, none));
  EXPECT_EQ(roomy.offload_applied, OffloadPolicy::none);
  EXPECT_TRUE(roomy.fits);
  EXPECT_EQ(roomy.total_bytes, none);

  const auto tighter = estimate_memory(model, plan, inputs(OffloadPolicy::dyn, none - 1));
  EXPECT_EQ(tighter.offload_applied, OffloadPolicy::conv);
  EXPECT_TRUE(tighter.fits);
  EXPECT_EQ(tighter.total_bytes, conv);

  const auto tight = estimate_memory(model, plan, inputs(OffloadPolicy::dyn, conv - 1));
  EXPECT_EQ(tight.offload_applied, OffloadPolicy::all);
  EXPECT_TRUE(tight.fits);
  EXPECT_EQ(tight.total_bytes, all);

  const auto hopeless = estimate_memory(model, plan, inputs(OffloadPolicy::dyn, all - 1));
  EXPECT_EQ(hopeless.offload_applied, OffloadPolicy::all);
  EXPECT_FALSE(hopeless.fits);
  EXPECT_EQ(hopeless.capacity_bytes, all - 1);
}

// ---------------------------------------------------------------------------------------------
// Spatial parallelism

// input 1x16x16 -> conv 4 3x3 pad 1 -> relu -> conv 4 3x3 pad 1 -> relu -> fc 10 -> loss.
ModelGraph split_model() {
  GraphBuilder b("split");
  auto x = b.input("input", 1, {16, 16});
  x = b.conv("conv1", x, {.out_channels = 4, .kernel = {3}, .padding = {1}});
  x = b.relu("relu1", x);
  x = b.conv("conv2", x, {.out_channels = 4, .kernel = {3}, .padding = {1}});
  x = b.relu("relu2", x);
  x = b.fully_connected("fc", x, 10);
  b.softmax_cross_entropy("loss", x);
  return std::move(b).build();
}

TEST(MemoryEstimate, SpatialSplitKeepsLocalActivationsWithHaloPlanes) {
  const auto model = split_model();
  ParallelConfig config;
  config.spatial_grid = {4, 1};
  const auto plan = plan_shards(model, config, "", {});
  ASSERT_EQ(plan.spatial_end, *model.index_of("fc"));
  // H split 4 ways: 4 local rows, plus one halo row on each side where a convolution reads.
  const std::vector<double> expected{
      1 * (4 + 2) * 16 * 4,  // input, read by conv1 with halo
      0,                     // conv1
      4 * (4 + 2) * 16 * 4,  // relu1, read by conv2 with halo
      0,                     // conv2
      4 * 4 * 16 * 4,        // relu2, read by fc (unsplit): its local shard
      0,                     // fc
      10 * 4,                // loss
  };
  ASSERT_EQ(model.layers().size(), expected.size());
  double kept = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(kept_activation_bytes(model, plan, i, DType::float32), expected[i])
        << model.layers()[i].layer.name;
    kept += expected[i];
  }
  const auto split = estimate_memory(model, plan, inputs());
  EXPECT_EQ(split.kept_activations_bytes, kept);
  EXPECT_EQ(split.input_buffers_bytes, 2 * (4 * 16 * 4));
  // Largest gradient pair: fc, with its full unsplit input (4x16x16) and 10 outputs.
  EXPECT_EQ(split.transient_bytes, (4 * 16 * 16 + 10) * 4);

  ParallelConfig unsplit_config;
  const auto unsplit = estimate_memory(model, plan_shards(model, unsplit_config, "", {}), inputs());
  EXPECT_EQ(unsplit.kept_activations_bytes, (256 + 2 * 4 * 256 + 10) * 4);
  EXPECT_LT(split.kept_activations_bytes, unsplit.kept_activations_bytes);
  EXPECT_LT(split.input_buffers_bytes, unsplit.input_buffers_bytes);
  EXPECT_EQ(split.weights_bytes, unsplit.weights_bytes);  // weights are replicated
  EXPECT_GT(split.kept_activations_bytes, unsplit.kept_activations_bytes / 4);  // the halos
}

}  // namespace
}  // namespace tessera
