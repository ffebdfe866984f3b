// The per-GPU memory plan (memory_plan.hpp) and its peak (memory_estimate.hpp) against
// hand-computed walks over tiny models: layer-by-layer allocation, vDNN offloading, the dynamic
// policy, spatial and model parallelism.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/core/model/graph_builder.hpp"
#include "tessera/core/strategy/memory_estimate.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"

namespace tessera {
namespace {

// input 1x8x8 -> conv 4 3x3 pad 1 (bias) -> relu -> fc 10 -> softmax cross-entropy.
//
// Parameters: conv 1*4*9 + 4 = 40, fc 256*10 + 10 = 2570; 2610 in all, 10440 bytes in float32.
// Per sample (elements): input 64, conv 256, relu 256, fc 10, loss 10.
// Kept for backward: input (read by conv), relu (its own output, and read by fc), loss (its own
// output); not conv's output (ReLU needs only its output) nor fc's (softmax needs only its output).
// The ReLU runs in place: its output takes conv's buffer, its input gradient its output gradient's.
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
constexpr double kReluBytes = kBatch * 256 * 4;  // 2048 (conv's output too)
// Weights, their gradients, Adam's two moments, the workspace, two input buffers.
constexpr double kStatic = 4 * kWeights + 1000 + 2 * kInputBytes;  // 43784
constexpr double kLossBytes = kBatch * 10 * 4;                     // 80, fc's output too
// The peak is fc's backward: the input and relu's output still kept, the gradients of fc's output
// (the loss's input gradient) and of relu's output (fc's input gradient) both alive.
constexpr double kPeak = kStatic + kInputBytes + kReluBytes + kReluBytes + kLossBytes;  // 48472

double sum_of_components(const MemoryEstimate& e) {
  return e.weights_bytes + e.weight_gradients_bytes + e.optimizer_state_bytes +
         e.activations_bytes + e.activation_gradients_bytes + e.workspace_bytes +
         e.input_buffers_bytes;
}

TEST(MemoryEstimate, TinyModelPeakByHand) {
  const auto model = tiny_model();
  const auto e = estimate_memory(model, unsplit_plan(model, 2), inputs());
  EXPECT_EQ(e.weights_bytes, kWeights);
  EXPECT_EQ(e.weight_gradients_bytes, kWeights);
  EXPECT_EQ(e.optimizer_state_bytes, 2 * kWeights);  // Adam: first and second moments
  EXPECT_EQ(e.workspace_bytes, 1000);
  EXPECT_EQ(e.input_buffers_bytes, 2 * kInputBytes);  // current and prefetched sample
  EXPECT_EQ(e.activations_bytes, kInputBytes + kReluBytes);
  EXPECT_EQ(e.activation_gradients_bytes, kReluBytes + kLossBytes);
  EXPECT_EQ(e.total_bytes, kPeak);
  EXPECT_EQ(e.total_bytes, 48472);
  EXPECT_EQ(e.total_bytes, sum_of_components(e));
  EXPECT_EQ(e.capacity_bytes, 1e12);
  EXPECT_TRUE(e.fits);
  EXPECT_EQ(e.worst_stage, 0);
  EXPECT_EQ(e.offload.policy, OffloadPolicy::none);
  EXPECT_EQ(e.offloaded_bytes, 0);
}

// The frameworks vDNN compares with hold every output and every gradient for the whole step.
TEST(MemoryEstimate, NetworkWideAllocationHoldsEveryTensor) {
  const auto model = tiny_model();
  auto in = inputs();
  in.allocation = MemoryAllocation::network_wide;
  const auto e = estimate_memory(model, unsplit_plan(model, 2), in);
  // conv and relu share one buffer (and one gradient); the samples have no gradient.
  const double outputs = kInputBytes + kReluBytes + 2 * kLossBytes;
  const double gradients = kReluBytes + 2 * kLossBytes;
  EXPECT_EQ(e.activations_bytes, outputs);
  EXPECT_EQ(e.activation_gradients_bytes, gradients);
  EXPECT_EQ(e.total_bytes, kStatic + outputs + gradients);
  EXPECT_GT(e.total_bytes, kPeak);
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

TEST(MemoryEstimate, EveryAllocationIsReleasedByTheStepsEnd) {
  const auto model = tiny_model();
  const auto plan = unsplit_plan(model, 2);
  for (auto policy : {OffloadPolicy::none, OffloadPolicy::all}) {
    const auto memory = plan_stage_memory(model, plan, 0, inputs(policy), {policy, false});
    double balance = 0;
    for (const auto& moments : memory.at_layer) {
      for (const auto& events : moments) {
        for (const auto& event : events) {
          if (event.kind == MemoryEventKind::allocate) balance += event.bytes;
          if (event.kind == MemoryEventKind::release) balance -= event.bytes;
        }
      }
    }
    EXPECT_EQ(balance, 0) << to_string(policy);
  }
}

TEST(MemoryEstimate, WithoutPrefetchOneInputBuffer) {
  const auto model = tiny_model();
  auto in = inputs();
  in.prefetch = false;
  const auto e = estimate_memory(model, unsplit_plan(model, 2), in);
  EXPECT_EQ(e.input_buffers_bytes, kInputBytes);
  EXPECT_EQ(e.total_bytes, kPeak - kInputBytes);
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
  auto in = inputs();
  in.dtype = DType::float16;
  const auto e = estimate_memory(model, unsplit_plan(model, 2), in);
  EXPECT_EQ(e.weights_bytes, kWeights / 2);
  EXPECT_EQ(e.activations_bytes, (kInputBytes + kReluBytes) / 2);
  EXPECT_EQ(e.input_buffers_bytes, kInputBytes);
  EXPECT_EQ(e.workspace_bytes, 1000);
  EXPECT_EQ(e.total_bytes, (kPeak - 1000) / 2 + 1000);
}

TEST(MemoryEstimate, ActivationsScaleWithTheMiniBatch) {
  const auto model = tiny_model();
  const auto one = estimate_memory(model, unsplit_plan(model, 1), inputs());
  const auto eight = estimate_memory(model, unsplit_plan(model, 8), inputs());
  EXPECT_EQ(eight.weights_bytes, one.weights_bytes);
  EXPECT_EQ(eight.activations_bytes, 8 * one.activations_bytes);
  EXPECT_EQ(eight.activation_gradients_bytes, 8 * one.activation_gradients_bytes);
  EXPECT_EQ(eight.input_buffers_bytes, 8 * one.input_buffers_bytes);
}

TEST(MemoryEstimate, FitsComparesWithCapacity) {
  const auto model = tiny_model();
  const auto plan = unsplit_plan(model, 2);
  EXPECT_TRUE(estimate_memory(model, plan, inputs(OffloadPolicy::none, kPeak)).fits);
  EXPECT_FALSE(estimate_memory(model, plan, inputs(OffloadPolicy::none, kPeak - 1)).fits);
}

// Stage 0 holds input, conv, relu; stage 1 fc and loss. Stage 1 receives relu's output (kept for
// fc's backward) and, at fc's backward, holds its gradient beside the loss's.
TEST(MemoryEstimate, ModelParallelReportsTheWorstStage) {
  const auto model = tiny_model();
  const auto e = estimate_memory(model, unsplit_plan(model, 2, 2, {"fc"}), inputs());
  EXPECT_EQ(e.worst_stage, 1);
  EXPECT_EQ(e.weights_bytes, 2570 * 4);
  EXPECT_EQ(e.optimizer_state_bytes, 2 * 2570 * 4);
  EXPECT_EQ(e.input_buffers_bytes, 0);  // samples arrive at stage 0
  EXPECT_EQ(e.activations_bytes, kReluBytes);
  EXPECT_EQ(e.activation_gradients_bytes, kReluBytes + kBatch * 10 * 4);
  EXPECT_EQ(e.total_bytes, 4 * 2570 * 4 + 1000 + 2 * kReluBytes + kBatch * 10 * 4);
  EXPECT_EQ(e.total_bytes, sum_of_components(e));
}

// ---------------------------------------------------------------------------------------------
// vDNN: offloading and the dynamic policy

// input 1x32x32 -> (conv 8 3x3 pad 1 -> relu) x 3 -> max pool 2 -> fc 10 -> loss.
ModelGraph deep_model() {
  GraphBuilder b("deep");
  auto x = b.input("input", 1, {32, 32});
  for (int i = 1; i <= 3; ++i) {
    x = b.conv("conv" + std::to_string(i), x, {.out_channels = 8, .kernel = {3}, .padding = {1}});
    x = b.relu("relu" + std::to_string(i), x);
  }
  x = b.pool("pool", x, {.mode = PoolMode::max, .kernel = {2}});
  x = b.fully_connected("fc", x, 10);
  b.softmax_cross_entropy("loss", x);
  return std::move(b).build();
}

constexpr double kImage = 1024 * 4;      // the input, batch 1
constexpr double kMap = 8 * 1024 * 4;    // every conv and relu output
constexpr double kPooled = 8 * 256 * 4;  // the pool's output
constexpr double kDeepWeights = (72 + 576 + 576 + 2048 * 10 + 10) * 4.0;
constexpr double kDeepStatic = 4 * kDeepWeights + 1000 + 2 * kImage;

TEST(MemoryEstimate, DeepModelPeaksByHand) {
  const auto model = deep_model();
  const auto plan = unsplit_plan(model, 1);
  // Without offloading the peak is the pool's backward: the image, relu1..3 (each in its
  // convolution's buffer: ReLUs run in place), the pool's output and the gradients of the pool's
  // output and input.
  const auto none = estimate_memory(model, plan, inputs(OffloadPolicy::none));
  EXPECT_EQ(none.total_bytes, kDeepStatic + kImage + 4 * kMap + 2 * kPooled);
  // conv: the image, relu1 and relu2 (read by convolutions) go to host memory; relu3 (read by the
  // pool) stays. The peak is conv3's backward: relu2 back (prefetched during the loss's backward,
  // conv3 being the next convolution), relu1 coming back (conv2 the next), the gradients of
  // relu3's and relu2's outputs.
  const auto conv = estimate_memory(model, plan, inputs(OffloadPolicy::conv));
  EXPECT_EQ(conv.offloaded_layers, (std::vector<std::string>{"input", "relu1", "relu2"}));
  EXPECT_EQ(conv.offloaded_bytes, kImage + 2 * kMap);
  EXPECT_EQ(conv.total_bytes, kDeepStatic + 2 * kMap + 2 * kMap);
  // all: relu3 too (the pool reads it).
  const auto all = estimate_memory(model, plan, inputs(OffloadPolicy::all));
  EXPECT_EQ(all.offloaded_layers, (std::vector<std::string>{"input", "relu1", "relu2", "relu3"}));
  EXPECT_EQ(all.offloaded_bytes, kImage + 3 * kMap);
  // relu3 comes back at once (the loss's backward: the nearest, conv3 the next convolution), so
  // the peak does not change.
  EXPECT_EQ(all.total_bytes, conv.total_bytes);
  EXPECT_LT(conv.total_bytes, none.total_bytes);
  EXPECT_EQ(all.total_bytes, sum_of_components(all));
  EXPECT_EQ(all.offload.policy, OffloadPolicy::all);
}

// Forward: an offloaded map is copied during its last forward reader and released at that layer's
// end. Backward: layer i starts bringing back the nearest map still to come, no further than the
// next convolution, and waits for it at its end.
TEST(MemoryPlan, OffloadAndPrefetchFollowVdnn) {
  const auto model = deep_model();
  const auto plan = unsplit_plan(model, 1);
  const auto memory =
      plan_stage_memory(model, plan, 0, inputs(OffloadPolicy::conv), {OffloadPolicy::conv, false});
  auto index = [&](const char* name) { return *model.index_of(name); };
  auto has = [&](std::size_t layer, MemoryMoment moment, MemoryEventKind kind, std::size_t tensor) {
    for (const auto& event : memory.at(layer, moment)) {
      if (event.kind == kind && event.tensor == tensor) return true;
    }
    return false;
  };
  using K = MemoryEventKind;
  using M = MemoryMoment;
  const auto relu1 = index("relu1"), relu2 = index("relu2");
  EXPECT_TRUE(has(index("conv2"), M::before_forward, K::offload_start, relu1));
  EXPECT_TRUE(has(index("conv2"), M::after_forward, K::offload_wait, relu1));
  EXPECT_TRUE(has(index("conv2"), M::after_forward, K::release, relu1));
  // relu2 (needed first by conv3's backward) comes back during the loss's backward: the nearest,
  // and conv3 is the next convolution.
  EXPECT_TRUE(has(index("loss"), M::before_backward, K::prefetch_start, relu2));
  EXPECT_TRUE(has(index("loss"), M::after_backward, K::prefetch_wait, relu2));
  // relu1 not before conv3 is reached: conv3's backward brings it (conv2 is the next convolution).
  for (const char* layer : {"loss", "fc", "pool", "relu3"}) {
    EXPECT_FALSE(has(index(layer), M::before_backward, K::prefetch_start, relu1)) << layer;
  }
  EXPECT_TRUE(has(index("conv3"), M::before_backward, K::prefetch_start, relu1));
  EXPECT_TRUE(has(index("conv2"), M::before_backward, K::prefetch_start, index("input")));
  // Released after the last backward user: relu1 after its own backward.
  EXPECT_TRUE(has(relu1, M::after_backward, K::release, relu1));
}

// input 1x16x16 -> (conv 4 3x3 pad 1 -> relu -> max pool 3x3 stride 1 pad 1) x 4 -> fc -> loss:
// every map the same size, each relu output read by a pool, each pool output by a convolution
// (but the last): conv and all offload different maps, and deep enough for both to pay.
ModelGraph blocks_model() {
  GraphBuilder b("blocks");
  auto x = b.input("input", 1, {16, 16});
  for (int i = 1; i <= 4; ++i) {
    const auto n = std::to_string(i);
    x = b.conv("conv" + n, x, {.out_channels = 4, .kernel = {3}, .padding = {1}});
    x = b.relu("relu" + n, x);
    x = b.pool("pool" + n, x,
               {.mode = PoolMode::max, .kernel = {3}, .stride = {1}, .padding = {1}});
  }
  x = b.fully_connected("fc", x, 10);
  b.softmax_cross_entropy("loss", x);
  return std::move(b).build();
}

// One map brought back per layer, from one layer ahead, is enough here: no layer waits before it
// runs (a wait in before_backward would be a stall).
TEST(MemoryPlan, NoLayerStallsForItsMaps) {
  const auto model = blocks_model();
  for (auto policy : {OffloadPolicy::conv, OffloadPolicy::all}) {
    const auto memory =
        plan_stage_memory(model, unsplit_plan(model, 1), 0, inputs(policy), {policy, false});
    ASSERT_FALSE(memory.offloaded.empty());
    std::size_t prefetches = 0;
    for (std::size_t i = 0; i < model.layers().size(); ++i) {
      for (const auto& event : memory.at(i, MemoryMoment::before_backward)) {
        EXPECT_NE(event.kind, MemoryEventKind::prefetch_wait)
            << to_string(policy) << ": " << model.layers()[i].layer.name << " stalls";
        prefetches += event.kind == MemoryEventKind::prefetch_start ? 1 : 0;
      }
    }
    EXPECT_EQ(prefetches, memory.offloaded.size()) << to_string(policy);
  }
}

TEST(MemoryEstimate, DynamicPicksTheLeastOffloadingThatFits) {
  const auto model = blocks_model();
  const auto plan = unsplit_plan(model, 1);
  const double none = estimate_memory(model, plan, inputs(OffloadPolicy::none)).total_bytes;
  const double conv = estimate_memory(model, plan, inputs(OffloadPolicy::conv)).total_bytes;
  const double all = estimate_memory(model, plan, inputs(OffloadPolicy::all)).total_bytes;
  ASSERT_LT(conv, none);
  ASSERT_LT(all, conv);

  const auto roomy = estimate_memory(model, plan, inputs(OffloadPolicy::dyn, none));
  EXPECT_EQ(roomy.offload.policy, OffloadPolicy::none);
  EXPECT_TRUE(roomy.fits);
  EXPECT_EQ(roomy.total_bytes, none);

  const auto tighter = estimate_memory(model, plan, inputs(OffloadPolicy::dyn, none - 1));
  EXPECT_EQ(tighter.offload.policy, OffloadPolicy::conv);
  EXPECT_EQ(tighter.total_bytes, conv);

  const auto tight = estimate_memory(model, plan, inputs(OffloadPolicy::dyn, conv - 1));
  EXPECT_EQ(tight.offload.policy, OffloadPolicy::all);
  EXPECT_FALSE(tight.offload.memory_optimal_algorithms);
  EXPECT_EQ(tight.total_bytes, all);

  // Then the memory-optimal algorithms: no workspace.
  const auto tightest = estimate_memory(model, plan, inputs(OffloadPolicy::dyn, all - 1));
  EXPECT_EQ(tightest.offload.policy, OffloadPolicy::all);
  EXPECT_TRUE(tightest.offload.memory_optimal_algorithms);
  EXPECT_EQ(tightest.workspace_bytes, 0);
  EXPECT_EQ(tightest.total_bytes, all - 1000);
  EXPECT_TRUE(tightest.fits);

  const auto hopeless = estimate_memory(model, plan, inputs(OffloadPolicy::dyn, all - 1001));
  EXPECT_TRUE(hopeless.offload.memory_optimal_algorithms);
  EXPECT_FALSE(hopeless.fits);
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
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(kept_activation_bytes(model, plan, i, DType::float32), expected[i])
        << model.layers()[i].layer.name;
  }
  const auto split = estimate_memory(model, plan, inputs());
  EXPECT_EQ(split.input_buffers_bytes, 2 * (4 * 16 * 4));
  const auto unsplit =
      estimate_memory(model, plan_shards(model, ParallelConfig{}, "", {}), inputs());
  EXPECT_LT(split.activations_bytes, unsplit.activations_bytes);
  EXPECT_LT(split.total_bytes, unsplit.total_bytes);
  EXPECT_EQ(split.weights_bytes, unsplit.weights_bytes);  // weights are replicated
}

}  // namespace
}  // namespace tessera
