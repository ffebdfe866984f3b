// vDNN in the step program: the memory plan's copies and allocations as ops, in an order that
// keeps every tensor a kernel touches on the device, and a peak equal to the memory estimate's.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/result/timeline.hpp"
#include "tessera/core/strategy/memory_estimate.hpp"
#include "tessera/core/strategy/step_program.hpp"
#include "tessera/core/zoo/model_zoo.hpp"

namespace tessera {
namespace {

DeviceRoofline offload_test_device() {
  DeviceRoofline device;
  device.device = "test-gpu";
  device.fp32_flops_per_second = 10e12;
  device.memory_bandwidth_bytes_per_second = 1e12;
  device.compute_efficiency = 0.5;
  device.memory_efficiency = 0.5;
  return device;
}

struct Vgg {
  ModelGraph model = build_zoo_model("vgg16", {});
  ShardPlan plan;
  MemoryInputs inputs;

  explicit Vgg(OffloadPolicy policy) {
    ParallelConfig config;
    config.mini_batch = 32;
    plan = plan_shards(model, config, "", {});
    inputs.offload = policy;
    inputs.workspace_bytes = 64.0 * 1024 * 1024;
    inputs.capacity_bytes = 12e9;
  }

  StepProgram program(const OffloadDecision& decision, bool overlap_copies = true) const {
    const ComputeCostModel costs(offload_test_device(), nullptr, inputs.workspace_bytes);
    StepOptions options;
    options.input_source = InputSource::none;
    options.overlap_memory_copies = overlap_copies;
    options.offload = decision;
    options.workspace_bytes = inputs.workspace_bytes;
    return build_step_programs(model, plan, costs, options).at(0);
  }
};

TEST(OffloadProgram, ThePlayedPeakIsTheEstimatesPeak) {
  for (auto policy : {OffloadPolicy::none, OffloadPolicy::conv, OffloadPolicy::all}) {
    const Vgg vgg(policy);
    const auto estimate = estimate_memory(vgg.model, vgg.plan, vgg.inputs);
    const auto program = vgg.program(estimate.offload);
    EXPECT_DOUBLE_EQ(serial_memory_timeline(program).peak_bytes(), estimate.total_bytes)
        << to_string(policy);
  }
}

// A device that copies on its own cores (a CPU rank) waits for each copy where it starts; the
// copies, the allocations and so the peak are those of a device with copy engines.
TEST(OffloadProgram, CopiesOnTheComputeCoresAreWaitedForWhereTheyStart) {
  const Vgg vgg(OffloadPolicy::all);
  const auto estimate = estimate_memory(vgg.model, vgg.plan, vgg.inputs);
  const auto beside = vgg.program(estimate.offload);
  const auto in_line = vgg.program(estimate.offload, false);
  int starts = 0;
  for (std::size_t i = 0; i < in_line.ops.size(); ++i) {
    const auto kind = in_line.ops[i].kind;
    if (kind != StepOpKind::offload_start && kind != StepOpKind::prefetch_start) continue;
    ++starts;
    ASSERT_LT(i + 1, in_line.ops.size());
    EXPECT_EQ(in_line.ops[i + 1].kind, kind == StepOpKind::offload_start
                                           ? StepOpKind::offload_wait
                                           : StepOpKind::prefetch_wait)
        << in_line.ops[i].label;
    EXPECT_EQ(in_line.ops[i + 1].layer, in_line.ops[i].layer);
  }
  EXPECT_GT(starts, 10);
  // Beside compute, an offload's wait comes later (vDNN hides the copy).
  const auto first_offload = [](const StepProgram& program) {
    for (std::size_t i = 0; i < program.ops.size(); ++i) {
      if (program.ops[i].kind == StepOpKind::offload_start) return i;
    }
    return program.ops.size();
  };
  ASSERT_LT(first_offload(beside) + 1, beside.ops.size());
  EXPECT_NE(beside.ops[first_offload(beside) + 1].kind, StepOpKind::offload_wait);
  EXPECT_DOUBLE_EQ(serial_memory_timeline(in_line).peak_bytes(), estimate.total_bytes);
}

// The feature maps at the peak shrink to a fraction (what vDNN is for); the weights, their
// gradients and Adam's state (2.2 GB for VGG-16) stay.
TEST(OffloadProgram, OffloadingLowersThePeakAndTheAverage) {
  const Vgg none(OffloadPolicy::none), all(OffloadPolicy::all);
  const auto kept_estimate = estimate_memory(none.model, none.plan, none.inputs);
  const auto moved_estimate = estimate_memory(all.model, all.plan, all.inputs);
  EXPECT_LT(moved_estimate.activations_bytes, 0.5 * kept_estimate.activations_bytes);
  const auto kept = serial_memory_timeline(none.program({OffloadPolicy::none, false}));
  const auto moved = serial_memory_timeline(all.program({OffloadPolicy::all, false}));
  EXPECT_LT(moved.peak_bytes(), kept.peak_bytes());
  EXPECT_LT(moved.average_bytes(), kept.average_bytes());
}

// The feature maps' own timeline (vDNN's paper counts those): the rest (weights, their gradients,
// optimizer state, workspace, input buffers) stays for the whole step, so the two timelines differ
// by a constant, and offloading takes a larger share of the maps' average than of the total.
TEST(OffloadProgram, TheFeatureMapsTimelineIsTheTotalLessWhatStays) {
  const Vgg none(OffloadPolicy::none), all(OffloadPolicy::all);
  const auto kept_program = none.program({OffloadPolicy::none, false});
  const auto moved_program = all.program({OffloadPolicy::all, false});
  const auto kept = serial_memory_timeline(kept_program);
  const auto kept_maps = serial_memory_timeline(kept_program, holds_feature_maps);
  const auto moved = serial_memory_timeline(moved_program);
  const auto moved_maps = serial_memory_timeline(moved_program, holds_feature_maps);
  const double staying = kept.average_bytes() - kept_maps.average_bytes();
  EXPECT_GT(staying, 0);
  EXPECT_NEAR(kept.peak_bytes() - kept_maps.peak_bytes(), staying, 1e-9 * kept.peak_bytes());
  EXPECT_NEAR(moved.average_bytes() - moved_maps.average_bytes(), staying,
              1e-9 * kept.peak_bytes());
  const double saved = 1 - moved.average_bytes() / kept.average_bytes();
  const double maps_saved = 1 - moved_maps.average_bytes() / kept_maps.average_bytes();
  EXPECT_GT(maps_saved, saved);
}

// Every kernel finds the maps it reads on the device: a map offloaded in forward is brought back
// (and waited for) before any backward kernel of a layer that reads it.
TEST(OffloadProgram, EveryKernelFindsItsTensorsOnTheDevice) {
  const Vgg vgg(OffloadPolicy::all);
  const auto program = vgg.program({OffloadPolicy::all, false});
  const auto& layers = vgg.model.layers();
  // An in-place ReLU's input lives in the ReLU's buffer.
  const auto successor = in_place_successors(vgg.model, vgg.plan);
  auto buffer_of = [&](std::size_t tensor) { return successor[tensor].value_or(tensor); };
  std::set<std::size_t> on_device, in_flight, offloaded;
  std::size_t offloads = 0, prefetches = 0;
  for (const auto& op : program.ops) {
    switch (op.kind) {
      case StepOpKind::allocate:
        if (op.memory == MemoryUse::activations) on_device.insert(op.layer);
        break;
      case StepOpKind::release:
        if (op.memory == MemoryUse::activations) on_device.erase(op.layer);
        break;
      case StepOpKind::offload_start:
        ++offloads;
        EXPECT_TRUE(on_device.count(op.layer)) << op.label;
        offloaded.insert(op.layer);
        break;
      case StepOpKind::prefetch_start:
        ++prefetches;
        EXPECT_TRUE(offloaded.count(op.layer)) << op.label;
        in_flight.insert(op.layer);
        break;
      case StepOpKind::prefetch_wait:
        in_flight.erase(op.layer);
        break;
      case StepOpKind::compute: {
        const auto needs = backward_needs(layers[op.layer].layer);
        std::vector<std::size_t> reads;
        if (op.direction == Direction::forward || needs.input) {
          reads = layers[op.layer].input_indices;
        }
        if (op.direction != Direction::forward && needs.output) reads.push_back(op.layer);
        for (auto tensor : reads) {
          EXPECT_TRUE(on_device.count(buffer_of(tensor)) && !in_flight.count(buffer_of(tensor)))
              << op.label << " reads " << layers[tensor].layer.name;
        }
        break;
      }
      default:
        break;
    }
  }
  EXPECT_GT(offloads, 5u);
  EXPECT_EQ(prefetches, offloads);
}

}  // namespace
}  // namespace tessera
