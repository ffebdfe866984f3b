#include <gtest/gtest.h>

#include "test_support.hpp"

#include <algorithm>
#include <numeric>

#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/strategy/halo_copies.hpp"
#include "tessera/core/strategy/step_program.hpp"
#include "tessera/core/zoo/model_zoo.hpp"

namespace tessera {
namespace {

using test::program_test_device;

ParallelConfig config(std::int64_t data, std::vector<std::int64_t> grid, std::int64_t model = 1) {
  ParallelConfig c;
  c.data = data;
  c.spatial_grid = std::move(grid);
  c.model_degree = model;
  c.mini_batch = 1;
  return c;
}

std::vector<const StepOp*> ops_of(const StepProgram& program, StepOpKind kind) {
  std::vector<const StepOp*> found;
  for (const auto& op : program.ops) {
    if (op.kind == kind) found.push_back(&op);
  }
  return found;
}

const StepOp* find_op(const StepProgram& program, StepOpKind kind, const std::string& label) {
  for (const auto& op : program.ops) {
    if (op.kind == kind && op.label.find(label) != std::string::npos) return &op;
  }
  return nullptr;
}

struct Fixture {
  ModelGraph model;
  ShardPlan plan;
  ComputeCostModel costs{program_test_device(), nullptr, 64.0 * 1024 * 1024};
  std::vector<StepProgram> programs;

  Fixture(const std::map<std::string, std::string>& options, ParallelConfig c,
          const std::string& until, StepOptions step = {})
      : model(build_zoo_model("cosmoflow", options)),
        plan(plan_shards(model, c, until, {})),
        programs(build_step_programs(model, plan, costs, step)) {}
};

TEST(StepProgram, DepthSplitCosmoflowExchangesHalosOfOnePlane) {
  Fixture f({{"width", "128"}}, config(2, {4, 1, 1}), "pool5");
  ASSERT_EQ(f.programs.size(), 1u);
  const auto& program = f.programs[0];
  // conv1 reads 4 channels of 128x128 planes, one plane from each neighbour.
  const double plane = 1.0 * 4 * 128 * 128 * 4;
  const auto* conv1 = find_op(program, StepOpKind::halo_start, "conv1 halo D");
  ASSERT_NE(conv1, nullptr);
  EXPECT_DOUBLE_EQ(conv1->bytes_to_lower, plane);
  EXPECT_DOUBLE_EQ(conv1->bytes_to_upper, plane);
  // pool1 (3/2/1) needs one plane from the lower neighbour and none from the upper one, so each
  // rank sends its last plane up and nothing down.
  const auto* pool1 = find_op(program, StepOpKind::halo_start, "pool1 halo D");
  ASSERT_NE(pool1, nullptr);
  EXPECT_DOUBLE_EQ(pool1->bytes_to_lower, 0.0);
  EXPECT_DOUBLE_EQ(pool1->bytes_to_upper, 1.0 * 16 * 128 * 128 * 4);
  // The faces sent are packed and those received unpacked, as device copies; a GPU at the grid's
  // edge spends the share of its one neighbour.
  const auto conv1_wait = std::find_if(program.ops.begin(), program.ops.end(), [&](const auto& op) {
    return op.kind == StepOpKind::halo_wait && op.exchange == conv1->exchange;
  });
  ASSERT_NE(conv1_wait, program.ops.end());
  EXPECT_DOUBLE_EQ(conv1->seconds, f.costs.copy_time(2 * plane, 2 * plane).seconds);
  EXPECT_DOUBLE_EQ(conv1_wait->seconds, f.costs.copy_time(2 * plane, 2 * plane).seconds);
  EXPECT_GT(conv1->seconds, 0.0);
  // Before its first exchange the layer loads its shard into the haloed window, zeroed first:
  // every GPU does that whole.
  const auto& conv1_shard = f.plan.layers[*f.model.index_of("conv1")];
  const double owned = 4.0 * static_cast<double>(conv1_shard.local_inputs[0].elements());
  const double window = 4.0 * static_cast<double>(conv1_shard.local_input_with_halo.elements());
  EXPECT_GT(window, owned);
  EXPECT_DOUBLE_EQ(conv1->window_seconds, f.costs.copy_time(owned, window + owned).seconds);
  EXPECT_DOUBLE_EQ(conv1_wait->window_seconds, 0.0);
  EXPECT_DOUBLE_EQ(halo_copy_seconds(*conv1, true, true), conv1->window_seconds + conv1->seconds);
  EXPECT_DOUBLE_EQ(halo_copy_seconds(*conv1, false, true),
                   conv1->window_seconds + conv1->seconds / 2);
  // pool1's rank sends up only and receives from below only.
  EXPECT_DOUBLE_EQ(halo_copy_seconds(*pool1, true, false), pool1->window_seconds);
  EXPECT_DOUBLE_EQ(halo_copy_seconds(*pool1, false, true), pool1->window_seconds + pool1->seconds);
  const auto pool1_wait = std::find_if(program.ops.begin(), program.ops.end(), [&](const auto& op) {
    return op.kind == StepOpKind::halo_wait && op.exchange == pool1->exchange;
  });
  ASSERT_NE(pool1_wait, program.ops.end());
  EXPECT_DOUBLE_EQ(halo_copy_seconds(*pool1_wait, true, false), pool1_wait->seconds);
  EXPECT_DOUBLE_EQ(halo_copy_seconds(*pool1_wait, false, true), 0.0);
  // Every halo start has its wait.
  for (const auto* start : ops_of(program, StepOpKind::halo_start)) {
    const auto waits = std::count_if(program.ops.begin(), program.ops.end(), [&](const StepOp& op) {
      return op.kind == StepOpKind::halo_wait && op.exchange == start->exchange;
    });
    EXPECT_EQ(waits, 1) << start->label;
  }
  // Backward is the adjoint of the forward fill, as the real partitioned kernels run it:
  // backward-data over the haloed window (64 / 4 planes + 2 for conv2), then the input gradient of
  // the halo planes goes back (input channels: pool1's 16), overlapped with backward-filter.
  const auto index = [&](StepOpKind kind, const std::string& label) {
    const auto* op = find_op(program, kind, label);
    EXPECT_NE(op, nullptr) << label;
    return op ? op - program.ops.data() : 0;
  };
  const double conv2_plane = 1.0 * 16 * 64 * 64 * 4;
  const auto* returned = find_op(program, StepOpKind::halo_start, "conv2 gradient halo D");
  ASSERT_NE(returned, nullptr);
  EXPECT_DOUBLE_EQ(returned->bytes_to_lower, conv2_plane);
  EXPECT_DOUBLE_EQ(returned->bytes_to_upper, conv2_plane);
  // The gradients received are summed into the planes they overlap: read both, write one.
  const auto summed = std::find_if(program.ops.begin(), program.ops.end(), [&](const auto& op) {
    return op.kind == StepOpKind::halo_wait && op.exchange == returned->exchange;
  });
  ASSERT_NE(summed, program.ops.end());
  EXPECT_DOUBLE_EQ(summed->seconds, f.costs.copy_time(4 * conv2_plane, 2 * conv2_plane).seconds);
  // That wait ends conv2's backward, where the owned part of the window's gradient is stored.
  const double conv2_owned =
      4.0 *
      static_cast<double>(f.plan.layers[*f.model.index_of("conv2")].local_inputs[0].elements());
  EXPECT_DOUBLE_EQ(summed->window_seconds, f.costs.copy_time(conv2_owned, conv2_owned).seconds);
  EXPECT_DOUBLE_EQ(returned->window_seconds, 0.0);
  EXPECT_LT(index(StepOpKind::compute, "conv2 backward_data"),
            index(StepOpKind::halo_start, "conv2 gradient halo D"));
  EXPECT_LT(index(StepOpKind::halo_start, "conv2 gradient halo D"),
            index(StepOpKind::compute, "conv2 backward_filter"));
  const auto* backward_data = find_op(program, StepOpKind::compute, "conv2 backward_data");
  ASSERT_NE(backward_data, nullptr);
  const auto& shard = f.plan.layers[*f.model.index_of("conv2")];
  const auto whole =
      f.costs.layer_time(f.model.layer("conv2").layer, shard.local_inputs, shard.local_output,
                         shard.local_batch, DType::float32, Direction::backward_data);
  EXPECT_NEAR(backward_data->seconds, whole.seconds * 18.0 / 16.0, 1e-12);
  // conv1 reads the samples: no input gradient to compute or return, as the real backend skips.
  EXPECT_EQ(find_op(program, StepOpKind::compute, "conv1 backward_data"), nullptr);
  EXPECT_EQ(find_op(program, StepOpKind::halo_start, "conv1 gradient halo D"), nullptr);
  EXPECT_NE(find_op(program, StepOpKind::compute, "conv1 backward_filter"), nullptr);
}

TEST(StepProgram, LayerComputeTimesAddUpTheComputeOpsPerLayerAndPass) {
  Fixture f({{"width", "64"}}, config(1, {4, 1, 1}), "pool3");
  const auto times = layer_compute_times(f.model, f.programs);
  double total = 0;
  for (const auto& op : f.programs[0].ops) {
    if (op.kind == StepOpKind::compute || op.kind == StepOpKind::update) total += op.seconds;
  }
  double listed = 0;
  for (const auto& time : times) listed += time.seconds;
  EXPECT_NEAR(listed, total, 1e-12 * total);
  // conv1's forward is its interior and boundary ops together; its backward both kernels.
  double forward = 0, backward = 0;
  for (const auto& op : f.programs[0].ops) {
    if (op.kind != StepOpKind::compute || op.label.rfind("conv1 ", 0) != 0) continue;
    (op.direction == Direction::forward ? forward : backward) += op.seconds;
  }
  const auto find = [&](const std::string& layer, const std::string& pass) {
    const auto found = std::find_if(times.begin(), times.end(), [&](const LayerComputeTime& t) {
      return t.layer == layer && t.pass == pass;
    });
    return found == times.end() ? -1.0 : found->seconds;
  };
  EXPECT_GT(forward, 0);
  EXPECT_DOUBLE_EQ(find("conv1", "forward"), forward);
  EXPECT_DOUBLE_EQ(find("conv1", "backward"), backward);
  EXPECT_EQ(times.back().layer, "optimizer");
  EXPECT_EQ(times.back().pass, "update");
  EXPECT_GT(times.back().seconds, 0);
}

TEST(StepProgram, RedistributesBeforeTheFirstUnsplitLayerBothWays) {
  // One sample split 4 ways: every GPU goes on with the whole sample, so it receives each
  // peer's whole shard (an all-gather). act5's local output is 256 channels x 1 x 4 x 4 floats.
  Fixture one({{"width", "128"}}, config(1, {4, 1, 1}), "pool5");
  const auto alltoalls = ops_of(one.programs[0], StepOpKind::group_alltoall);
  ASSERT_EQ(alltoalls.size(), 2u);
  const double shard_per_sample = 256.0 * 1 * 4 * 4 * 4;
  EXPECT_DOUBLE_EQ(alltoalls[0]->bytes, shard_per_sample);
  EXPECT_NE(alltoalls[0]->label.find("activations before pool5"), std::string::npos);
  EXPECT_NE(alltoalls[1]->label.find("gradients"), std::string::npos);
  // Four samples split 4 ways: each GPU keeps one whole sample, a quarter of what it holds.
  ParallelConfig four = config(1, {4, 1, 1});
  four.mini_batch = 4;
  Fixture spread({{"width", "128"}}, four, "pool5");
  EXPECT_DOUBLE_EQ(ops_of(spread.programs[0], StepOpKind::group_alltoall)[0]->bytes,
                   shard_per_sample * 4 / 4);
}

TEST(StepProgram, GradientBucketsCarryEveryWeightOnceThenWaitBeforeTheUpdate) {
  StepOptions step;
  step.gradient_bucket_bytes = 4.0 * 1024 * 1024;
  Fixture f({{"width", "128"}}, config(8, {1, 1, 1}), "", step);
  const auto& program = f.programs[0];
  const auto buckets = ops_of(program, StepOpKind::gradient_allreduce);
  const double total =
      std::accumulate(buckets.begin(), buckets.end(), 0.0,
                      [](double sum, const StepOp* op) { return sum + op->bytes; });
  EXPECT_DOUBLE_EQ(total, 9437636.0 * 4);
  EXPECT_GT(buckets.size(), 3u);
  EXPECT_EQ(program.allreduce_group_size, 8);
  // The wait comes after the last bucket and before the optimizer.
  std::size_t wait = 0, update = 0, last_bucket = 0;
  for (std::size_t i = 0; i < program.ops.size(); ++i) {
    if (program.ops[i].kind == StepOpKind::gradient_wait) wait = i;
    if (program.ops[i].label == "optimizer update") update = i;
    if (program.ops[i].kind == StepOpKind::gradient_allreduce) last_bucket = i;
  }
  EXPECT_LT(last_bucket, wait);
  EXPECT_LT(wait, update);
  // The first bucket is queued during backward, before the first layer's gradients exist.
  const auto* conv1_backward = find_op(program, StepOpKind::compute, "conv1 backward_filter");
  ASSERT_NE(conv1_backward, nullptr);
  EXPECT_LT(buckets.front() - program.ops.data(), conv1_backward - program.ops.data());
}

TEST(StepProgram, WithoutOverlapEveryGradientBucketIsWaitedForWhereItIsQueued) {
  StepOptions options;
  options.gradient_bucket_bytes = 1 << 20;
  options.overlap_gradient_allreduce = false;
  Fixture f({{"width", "64"}}, config(2, {1, 1, 1}), "", options);
  const auto& ops = f.programs[0].ops;
  std::size_t buckets = 0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind != StepOpKind::gradient_allreduce) continue;
    ++buckets;
    ASSERT_LT(i + 1, ops.size());
    EXPECT_EQ(ops[i + 1].kind, StepOpKind::gradient_wait) << ops[i].label;
  }
  EXPECT_GT(buckets, 1u);
}

TEST(StepProgram, OneGpuHasNoCommunication) {
  Fixture f({{"width", "64"}}, config(1, {1, 1, 1}), "");
  for (const auto& op : f.programs[0].ops) {
    EXPECT_TRUE(op.kind == StepOpKind::compute || op.kind == StepOpKind::update ||
                op.kind == StepOpKind::read_start || op.kind == StepOpKind::read_wait ||
                op.kind == StepOpKind::allocate || op.kind == StepOpKind::release)
        << op.label;
  }
}

TEST(StepProgram, BatchNormWithGlobalStatisticsAllReducesTwoSumsPerChannelBetweenItsParts) {
  Fixture f({{"width", "128"}, {"batch_norm", "true"}}, config(1, {4, 1, 1}), "pool5");
  const auto& ops = f.programs[0].ops;
  const auto* bn1 = find_op(f.programs[0], StepOpKind::group_allreduce, "bn1 forward");
  ASSERT_NE(bn1, nullptr);
  EXPECT_DOUBLE_EQ(bn1->bytes, 2.0 * 16 * 8);  // sums in double precision
  // Statistics, the group's sum, then the normalisation: the kernels need the sums in between.
  const auto at = static_cast<std::size_t>(bn1 - ops.data());
  ASSERT_GT(at, 0u);
  EXPECT_EQ(ops[at - 1].part, StepPart::statistics);
  EXPECT_EQ(ops[at + 1].part, StepPart::apply);
  EXPECT_EQ(ops[at - 1].layer, ops[at + 1].layer);
  EXPECT_NEAR(ops[at - 1].seconds / (ops[at - 1].seconds + ops[at + 1].seconds), 1.0 / 3, 1e-12);
  EXPECT_NE(find_op(f.programs[0], StepOpKind::group_allreduce, "bn1 backward"), nullptr);
  // After the redistribution the group's GPUs share the samples, so unsplit layers sum too.
  EXPECT_NE(find_op(f.programs[0], StepOpKind::group_allreduce, "bn6 forward"), nullptr);
  // Without a spatial split there is no group to sum over.
  Fixture data({{"width", "128"}, {"batch_norm", "true"}}, config(4, {1, 1, 1}), "");
  EXPECT_TRUE(ops_of(data.programs[0], StepOpKind::group_allreduce).empty());
}

TEST(StepProgram, SplitAxesExchangeOneAfterAnotherAndGradientsReturnInReverse) {
  // 2 x 2 x 1 grid: conv2 exchanges D then H forward, H then D backward, each axis waited for
  // before the next starts (a face message carries the corners the earlier axis filled).
  Fixture f({{"width", "64"}}, config(1, {2, 2, 1}), "pool3");
  std::vector<std::pair<int, Direction>> conv2_starts;
  const auto& ops = f.programs[0].ops;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind != StepOpKind::halo_start || ops[i].label.rfind("conv2 ", 0) != 0) continue;
    conv2_starts.emplace_back(ops[i].axis, ops[i].direction);
    // The next halo op waits for this one.
    const auto wait = std::find_if(
        ops.begin() + static_cast<std::ptrdiff_t>(i) + 1, ops.end(), [](const StepOp& op) {
          return op.kind == StepOpKind::halo_start || op.kind == StepOpKind::halo_wait;
        });
    ASSERT_NE(wait, ops.end());
    EXPECT_EQ(wait->kind, StepOpKind::halo_wait);
    EXPECT_EQ(wait->exchange, ops[i].exchange);
  }
  const std::vector<std::pair<int, Direction>> expected{{0, Direction::forward},
                                                        {1, Direction::forward},
                                                        {1, Direction::backward_data},
                                                        {0, Direction::backward_data}};
  EXPECT_EQ(conv2_starts, expected);
}

TEST(StepProgram, PoolingExchangesBeforeComputingAndConvolutionsOverlapOnlyWhenThickEnough) {
  // 64^3 split 4 ways: conv1 (3^3 on 16 planes, >= 3 reaches of 3) overlaps its interior; pool1
  // exchanges first; conv3 on 16^3 / 4 = 4 planes is too thin to overlap.
  Fixture f({{"width", "64"}}, config(1, {4, 1, 1}), "pool4");
  EXPECT_NE(find_op(f.programs[0], StepOpKind::compute, "conv1 forward (interior)"), nullptr);
  EXPECT_NE(find_op(f.programs[0], StepOpKind::compute, "conv1 forward (boundary)"), nullptr);
  EXPECT_EQ(find_op(f.programs[0], StepOpKind::compute, "pool1 forward (interior)"), nullptr);
  EXPECT_NE(find_op(f.programs[0], StepOpKind::compute, "pool1 forward"), nullptr);
  EXPECT_EQ(find_op(f.programs[0], StepOpKind::compute, "conv3 forward (interior)"), nullptr);
  EXPECT_TRUE(interior_overlaps_exchange(9, 3));
  EXPECT_FALSE(interior_overlaps_exchange(8, 3));
}

TEST(StepProgram, BucketsListTheirLayersAndEveryLayerRunsEachOfItsPasses) {
  Fixture f({{"width", "64"}}, config(2, {1, 1, 1}), "");
  const auto& program = f.programs[0];
  std::vector<std::size_t> bucketed;
  double bytes = 0;
  for (const auto& bucket : program.buckets) {
    bucketed.insert(bucketed.end(), bucket.layers.begin(), bucket.layers.end());
    bytes += bucket.bytes;
    // Each bucket is queued after the backward of its last (lowest) layer.
    ASSERT_FALSE(bucket.layers.empty());
    EXPECT_TRUE(std::is_sorted(bucket.layers.rbegin(), bucket.layers.rend()));
  }
  EXPECT_DOUBLE_EQ(bytes, static_cast<double>(parameter_count(f.model)) * 4.0);
  for (std::size_t i = 0; i < f.model.layers().size(); ++i) {
    const bool has_parameters = parameter_count(f.model.layers()[i]) > 0;
    EXPECT_EQ(std::count(bucketed.begin(), bucketed.end(), i), has_parameters ? 1 : 0) << i;
    // Every layer but the input runs forward, even where its time rounds to nothing.
    const auto& layer = f.model.layers()[i].layer;
    const bool forward = std::any_of(program.ops.begin(), program.ops.end(), [&](const StepOp& op) {
      return op.kind == StepOpKind::compute && op.layer == i && op.direction == Direction::forward;
    });
    EXPECT_EQ(forward, layer.kind != LayerKind::input) << layer.name;
  }
  const auto* allreduce = find_op(program, StepOpKind::gradient_allreduce, "gradient bucket 0");
  ASSERT_NE(allreduce, nullptr);
  EXPECT_EQ(allreduce->bucket, 0);
  EXPECT_EQ(ops_of(program, StepOpKind::update).size(), 1u);
}

TEST(StepProgram, ModelParallelStagesPassActivationsAndGradients) {
  auto model = build_zoo_model("cosmoflow", {{"width", "64"}});
  const auto plan = plan_shards(model, config(1, {1, 1, 1}, 2), "", {"fc1"});
  ComputeCostModel costs{program_test_device(), nullptr, 0};
  const auto programs = build_step_programs(model, plan, costs, {});
  ASSERT_EQ(programs.size(), 2u);
  const auto* send = find_op(programs[0], StepOpKind::stage_send, "send drop1");
  const auto* recv = find_op(programs[1], StepOpKind::stage_recv, "receive drop1");
  ASSERT_NE(send, nullptr);
  ASSERT_NE(recv, nullptr);
  EXPECT_DOUBLE_EQ(send->bytes, 2048.0 * 4);
  EXPECT_DOUBLE_EQ(recv->bytes, send->bytes);
  EXPECT_NE(find_op(programs[1], StepOpKind::stage_send, "send gradient of drop1"), nullptr);
  EXPECT_NE(find_op(programs[0], StepOpKind::stage_recv, "receive gradient of drop1"), nullptr);
  // Each stage updates only its own parameters.
  EXPECT_DOUBLE_EQ(programs[0].parameters + programs[1].parameters, 9437636.0);
  EXPECT_DOUBLE_EQ(programs[1].parameters, 4196352.0 + 524544 + 1028);
}

TEST(StepProgram, ComputeTimesComeFromTheRooflineAndSayWhere) {
  Fixture f({{"width", "64"}}, config(1, {1, 1, 1}), "");
  const auto* conv1 = find_op(f.programs[0], StepOpKind::compute, "conv1 forward");
  ASSERT_NE(conv1, nullptr);
  // 2 * 64^3 outputs * 16 filters * 4 channels * 27 taps at 5 TFLOP/s achieved, vs the bytes at
  // 0.5 TB/s: input 4 MiB + output 16 MiB + weights.
  const double flops = 2.0 * 64 * 64 * 64 * 16 * 4 * 27;
  const double bytes = (4.0 * 64 * 64 * 64 + 16.0 * 64 * 64 * 64 + 1728) * 4;
  EXPECT_NEAR(conv1->seconds, std::max(flops / 5e12, bytes / 0.5e12) + 1e-6, 1e-12);
  EXPECT_EQ(conv1->provenance, Provenance::roofline);
}

TEST(StepProgram, ProfiledKernelsReplaceTheRoofline) {
  auto model = build_zoo_model("cosmoflow", {{"width", "64"}});
  const auto plan = plan_shards(model, config(1, {1, 1, 1}), "", {});
  const auto& conv1 = model.layer("conv1");
  const auto& shard = plan.layers[*model.index_of("conv1")];
  ProfileDatabase profiles;
  profiles.add({.device = "test-gpu",
                .op = "conv",
                .direction = Direction::forward,
                .shape = kernel_shape_key(conv1.layer, shard.local_inputs, shard.local_output),
                .micro_batch = 1,
                .algorithm = "implicit_gemm",
                .time_seconds = 0.0042});
  ComputeCostModel costs{program_test_device(), &profiles, 64.0 * 1024 * 1024};
  const auto programs = build_step_programs(model, plan, costs, {});
  const auto* op = find_op(programs[0], StepOpKind::compute, "conv1 forward");
  ASSERT_NE(op, nullptr);
  EXPECT_DOUBLE_EQ(op->seconds, 0.0042);
  EXPECT_EQ(op->provenance, Provenance::profile);
  // Directions without a profile still use the roofline.
  EXPECT_EQ(find_op(programs[0], StepOpKind::compute, "conv1 backward_filter")->provenance,
            Provenance::roofline);
}

// A depth-split convolution runs windows (window_kernels.hpp): its interior window follows the
// layer's profiled plan at the window's own measured time, its boundary slabs, whose rows lack
// that algorithm, fall back to theirs, and a pass without window rows keeps its share of the
// layer's time with no plan (the library picks).
TEST(StepProgram, SplitConvolutionsRunTheirWindowsAsProfiled) {
  auto model = build_zoo_model("cosmoflow", {{"width", "128"}});
  const auto plan = plan_shards(model, config(1, {4, 1, 1}), "pool5", {});
  const std::size_t index = *model.index_of("conv1");
  const auto& conv1 = model.layers()[index];
  const auto& shard = plan.layers[index];
  ASSERT_TRUE(runs_window_kernels(conv1.layer, shard.spatially_split));
  ProfileDatabase profiles;
  const auto row = [&](const std::string& shape, const std::string& algorithm, double seconds) {
    profiles.add({.device = "test-gpu",
                  .op = "conv",
                  .direction = Direction::forward,
                  .shape = shape,
                  .micro_batch = 1,
                  .algorithm = algorithm,
                  .time_seconds = seconds});
  };
  row(kernel_shape_key(conv1.layer, shard.local_inputs, shard.local_output), "implicit_gemm",
      0.004);
  const auto windows_of = [&](StepPart part) {
    return window_kernels_by_shard(conv1, plan.config.spatial_grid, Direction::forward, part);
  };
  for (const auto& windows : windows_of(StepPart::interior)) {
    for (const auto& window : windows) row(window.shape, "implicit_gemm", 0.003);
  }
  for (const auto& windows : windows_of(StepPart::boundary)) {
    for (const auto& window : windows) row(window.shape, "direct", 0.0005);
  }
  ComputeCostModel costs{program_test_device(), &profiles, 64.0 * 1024 * 1024};
  const auto program = build_step_programs(model, plan, costs, {}).at(0);

  const auto* interior = find_op(program, StepOpKind::compute, "conv1 forward (interior)");
  ASSERT_NE(interior, nullptr);
  ASSERT_FALSE(interior->window_plans.empty());
  for (const auto& window : interior->window_plans) {
    EXPECT_EQ(window.source, WindowPlanSource::follows_layer);
    EXPECT_EQ(describe(window.plan), "1 x 1 implicit_gemm");
  }
  EXPECT_DOUBLE_EQ(interior->seconds, 0.003);
  EXPECT_EQ(interior->provenance, Provenance::profile);

  const auto* boundary = find_op(program, StepOpKind::compute, "conv1 forward (boundary)");
  ASSERT_NE(boundary, nullptr);
  // Every shard's slabs: the first and last shard have one, the middle ones two of equal shape.
  ASSERT_FALSE(boundary->window_plans.empty());
  for (const auto& window : boundary->window_plans) {
    EXPECT_EQ(window.source, WindowPlanSource::falls_back);
    EXPECT_EQ(window.plan.micro_batches.at(0).algorithm, "direct");
    EXPECT_EQ(window.kernel.output.spatial.at(0), 1) << window.kernel.shape;
  }
  // The timed shard (the third of four) has a neighbour on each side: two slabs.
  EXPECT_DOUBLE_EQ(boundary->seconds, 2 * 0.0005);
  EXPECT_NE(boundary->label.find("windows fall back"), std::string::npos) << boundary->label;

  const auto* filter = find_op(program, StepOpKind::compute, "conv1 backward_filter");
  ASSERT_NE(filter, nullptr);
  ASSERT_FALSE(filter->window_plans.empty());
  for (const auto& window : filter->window_plans) {
    EXPECT_EQ(window.source, WindowPlanSource::unprofiled);
    EXPECT_TRUE(window.plan.micro_batches.empty());
  }
  EXPECT_EQ(filter->provenance, Provenance::roofline);
  const auto roofline =
      costs.layer_time(conv1.layer, shard.local_inputs, shard.local_output, shard.local_batch,
                       DType::float32, Direction::backward_filter);
  EXPECT_DOUBLE_EQ(filter->seconds, roofline.seconds);
  // Unsplit layers run their own problem.
  for (const auto& op : program.ops) {
    if (op.layer != SIZE_MAX && !plan.layers[op.layer].spatially_split) {
      EXPECT_TRUE(op.window_plans.empty()) << op.label;
    }
  }
}

// The ops that take time or move data: without the memory plan's allocations and releases.
std::vector<StepOp> timed_ops(const StepProgram& program) {
  std::vector<StepOp> ops;
  for (const auto& op : program.ops) {
    if (op.kind != StepOpKind::allocate && op.kind != StepOpKind::release) ops.push_back(op);
  }
  return ops;
}

TEST(StepProgram, PrefetchOverlapsTheReadWithTheWholeStep) {
  Fixture prefetched({{"width", "64"}}, config(1, {4, 1, 1}), "pool4");
  const auto ops = timed_ops(prefetched.programs[0]);
  EXPECT_EQ(ops.front().kind, StepOpKind::read_start);
  EXPECT_EQ(ops.back().kind, StepOpKind::read_wait);
  // Each GPU reads only its quarter of the 4 x 64^3 float32 sample.
  EXPECT_DOUBLE_EQ(ops.front().bytes, 4.0 * 16 * 64 * 64 * 4);

  StepOptions whole;
  whole.prefetch = false;
  whole.read_sub_volume = false;
  Fixture blocking({{"width", "64"}}, config(1, {4, 1, 1}), "pool4", whole);
  const auto blocking_ops = timed_ops(blocking.programs[0]);
  EXPECT_EQ(blocking_ops[1].kind, StepOpKind::read_wait);
  EXPECT_DOUBLE_EQ(blocking_ops.front().bytes, 4.0 * 64 * 64 * 64 * 4);
}

TEST(StepProgram, AReadMovesTheFilesValuesNotTheModels) {
  StepOptions counts;
  counts.stored_dtype = StoredDType::int16;  // MLPerf HPC's CosmoFlow files
  Fixture int16({{"width", "64"}}, config(1, {4, 1, 1}), "pool4", counts);
  EXPECT_DOUBLE_EQ(timed_ops(int16.programs[0]).front().bytes, 4.0 * 16 * 64 * 64 * 2);
}

}  // namespace
}  // namespace tessera
