// The runner executes a followed plan where the device offers its algorithms for the problem at
// hand, and the library's first choice elsewhere (another batch, an algorithm not offered); the
// results equal the exact convolution either way.
#include "tessera/kernels/convolution_runner.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "convolution_test_support.hpp"
#include "tessera/kernels/device.hpp"

namespace tessera::kernels {
namespace {

using testing::direction_tensors;
using testing::download;
using testing::upload;
using testing::within_rounding;

constexpr std::int64_t kRunnerBatch = 4;

// 2 -> 3 channels, 3x3x3 kernel, stride 1, 'same' padding.
ConvolutionGeometry small_3d_convolution() {
  return testing::geometry(2, 3, {5, 4, 4}, 3, 1, 1);
}

// An algorithm other than the library's first choice (the last one it offers).
std::string not_the_first(Device& device, const ConvolutionGeometry& geometry,
                          Direction direction) {
  const auto offered = device.convolutions().algorithms(geometry, kRunnerBatch, direction);
  return offered.back().name;
}

void run(ConvolutionRunner& runner, const ConvolutionGeometry& geometry, std::int64_t samples,
         Direction direction, const float* first, const float* second, float* result) {
  switch (direction) {
    case Direction::forward:
      return runner.forward(geometry, samples, first, second, result, 0.0f);
    case Direction::backward_data:
      return runner.backward_data(geometry, samples, first, second, result, 0.0f);
    case Direction::backward_filter:
      return runner.backward_filter(geometry, samples, first, second, result, 0.0f);
  }
}

// Runs the runner's plan for (geometry, batch, direction) on seeded operands: true when the
// result equals the reference convolution's within rounding.
bool runs_correctly(ConvolutionRunner& runner, Device& device, const ConvolutionGeometry& geometry,
                    Direction direction, std::uint32_t seed) {
  const auto tensors = direction_tensors(geometry, kRunnerBatch, direction, seed);
  auto first_input = upload(device, tensors.first_input);
  auto second_input = upload(device, tensors.second_input);
  auto result = device.allocate(tensors.expected.size() * sizeof(float));
  run(runner, geometry, kRunnerBatch, direction, first_input->data(), second_input->data(),
      result->data());
  return within_rounding(download(device, *result), tensors.expected, tensors.magnitude);
}

class ConvolutionRunnerFollowing : public ::testing::TestWithParam<Direction> {};

TEST_P(ConvolutionRunnerFollowing, RunsThePlanForItsProblemAndTheFirstChoiceElsewhere) {
  const Direction direction = GetParam();
  const ConvolutionGeometry geometry = small_3d_convolution();
  auto device = open_cpu_device();
  const auto first_choice =
      device->convolutions().algorithms(geometry, kRunnerBatch, direction).front();
  const std::string planned_algorithm = not_the_first(*device, geometry, direction);
  ASSERT_NE(planned_algorithm, first_choice.name) << "the CPU library offers one algorithm only";
  const MicroBatchPlan plan{{{.samples = 1, .algorithm = planned_algorithm},
                             {.samples = 3, .algorithm = planned_algorithm}}};

  ConvolutionRunner runner(*device);
  EXPECT_EQ(runner.plan(geometry, kRunnerBatch, direction).micro_batches.front().algorithm,
            first_choice.name);
  runner.follow(geometry, kRunnerBatch, direction, plan);
  const auto& followed = runner.plan(geometry, kRunnerBatch, direction);
  ASSERT_EQ(followed.micro_batches.size(), 2u);
  EXPECT_EQ(followed.micro_batches[1].algorithm, planned_algorithm);
  // Another problem (here another batch) has no plan: the first choice, undivided.
  const auto& other_batch = runner.plan(geometry, kRunnerBatch + 1, direction);
  ASSERT_EQ(other_batch.micro_batches.size(), 1u);
  EXPECT_EQ(other_batch.micro_batches.front().samples, kRunnerBatch + 1);
  // The other directions are not touched.
  for (const auto other :
       {Direction::forward, Direction::backward_data, Direction::backward_filter}) {
    if (other == direction) continue;
    EXPECT_TRUE(runner.plan(geometry, kRunnerBatch, other).undivided());
  }

  EXPECT_TRUE(runs_correctly(runner, *device, geometry, direction, 17));
}

// A plan from a profile of another device or library names an algorithm this one lacks: the
// library's first choice runs instead, and the runner counts it.
TEST_P(ConvolutionRunnerFollowing, RunsTheLibrarysChoiceForAPlanTheDeviceDoesNotOffer) {
  const Direction direction = GetParam();
  const ConvolutionGeometry geometry = small_3d_convolution();
  auto device = open_cpu_device();
  ConvolutionRunner runner(*device);
  runner.follow(geometry, kRunnerBatch, direction,
                {{{.samples = kRunnerBatch, .algorithm = "no such algorithm"}}});
  EXPECT_EQ(runner.replaced_plans(), 0u);  // counted when it runs, not when it is given
  const auto& ran = runner.plan(geometry, kRunnerBatch, direction);
  ASSERT_EQ(ran.micro_batches.size(), 1u);
  EXPECT_EQ(ran.micro_batches.front().algorithm,
            device->convolutions().algorithms(geometry, kRunnerBatch, direction).front().name);
  EXPECT_EQ(runner.replaced_plans(), 1u);
  EXPECT_EQ(runner.plan_counts().replaced, 1u);
  EXPECT_EQ(runner.plan_counts().without_plan, 0u);
  EXPECT_TRUE(runs_correctly(runner, *device, geometry, direction, 19));
  EXPECT_THROW(runner.follow(geometry, kRunnerBatch + 1, direction,
                             {{{.samples = kRunnerBatch, .algorithm = "no such algorithm"}}}),
               std::invalid_argument);
  // Under real.deterministic the user's choice overrides the plan: the first deterministic
  // algorithm runs instead.
  device->convolutions().keep_deterministic_only(true);
  ConvolutionRunner deterministic(*device);
  deterministic.follow(geometry, kRunnerBatch, direction,
                       {{{.samples = kRunnerBatch, .algorithm = "no such algorithm"}}});
  EXPECT_EQ(deterministic.plan(geometry, kRunnerBatch, direction).micro_batches.front().algorithm,
            device->convolutions().algorithms(geometry, kRunnerBatch, direction).front().name);
  EXPECT_EQ(deterministic.replaced_plans(), 0u);  // the user's choice, not a foreign plan
}

INSTANTIATE_TEST_SUITE_P(Directions, ConvolutionRunnerFollowing,
                         ::testing::Values(Direction::forward, Direction::backward_data,
                                           Direction::backward_filter),
                         [](const auto& param_info) { return to_string(param_info.param); });

TEST(ConvolutionWorkspace, GrowsToTheLargestRequestAndIsSharedByRunners) {
  auto device = open_cpu_device();
  auto shared = std::make_shared<ConvolutionWorkspace>(*device);
  EXPECT_EQ(shared->at_least(0), nullptr);
  DeviceMemory* small = shared->at_least(100);
  ASSERT_NE(small, nullptr);
  EXPECT_GE(small->bytes(), 100u);
  EXPECT_EQ(shared->at_least(50), small);
  DeviceMemory* large = shared->at_least(1 << 20);
  EXPECT_GE(large->bytes(), std::size_t{1} << 20);
  EXPECT_EQ(shared->at_least(100), large);
}

}  // namespace
}  // namespace tessera::kernels
