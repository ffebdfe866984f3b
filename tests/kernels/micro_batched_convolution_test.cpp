// A convolution run as micro-batches equals the undivided one in all three directions, for plans
// with one, many, uneven and mixed-algorithm micro-batches; backward-filter accumulates across
// micro-batches (and the test shows the beta = 0 bug would be caught).
#include "tessera/kernels/micro_batched_convolution.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "convolution_test_support.hpp"
#include "tessera/kernels/device.hpp"

namespace tessera::kernels {
namespace {

using testing::direction_tensors;
using testing::download;
using testing::random_floats;
using testing::upload;
using testing::within_rounding;

constexpr std::int64_t kMiniBatch = 8;

// 2 -> 3 channels, 3x3x3 kernel, stride 1, 'same' padding.
ConvolutionGeometry micro_batched_small_3d_convolution() {
  return testing::geometry(2, 3, {4, 4, 4}, 3, 1, 1);
}

// Two algorithms every micro-batch size offers: the first and, when there is one, a blocked one
// (a different implementation, so that mixed plans mix code paths).
std::pair<std::string, std::string> two_algorithms(ConvolutionKernels& kernels,
                                                   const ConvolutionGeometry& geometry,
                                                   Direction direction) {
  const auto offered = kernels.algorithms(geometry, kMiniBatch, direction);
  auto blocked = std::find_if(offered.begin(), offered.end(), [](const ConvolutionAlgorithm& each) {
    return each.name.ends_with("/blocked");
  });
  return {offered.front().name, blocked != offered.end() ? blocked->name : offered.back().name};
}

enum class PlanShape { undivided, single_samples, three_five, three_five_mixed, mixed_uneven };

MicroBatchPlan plan_of(PlanShape shape, const std::string& first, const std::string& second) {
  switch (shape) {
    case PlanShape::undivided:
      return {{{.samples = kMiniBatch, .algorithm = first}}};
    case PlanShape::single_samples:
      return {std::vector<MicroBatch>(kMiniBatch, {.samples = 1, .algorithm = first})};
    case PlanShape::three_five:
      return {{{.samples = 3, .algorithm = first}, {.samples = 5, .algorithm = first}}};
    case PlanShape::three_five_mixed:
      return {{{.samples = 3, .algorithm = first}, {.samples = 5, .algorithm = second}}};
    case PlanShape::mixed_uneven:
      return {{{.samples = 2, .algorithm = second},
               {.samples = 1, .algorithm = first},
               {.samples = 5, .algorithm = second}}};
  }
  return {};
}

class MicroBatchedConvolution : public ::testing::TestWithParam<std::tuple<Direction, PlanShape>> {
};

TEST_P(MicroBatchedConvolution, EqualsTheUndividedConvolutionForBetaZeroAndOne) {
  const auto [direction, shape] = GetParam();
  const ConvolutionGeometry geometry = micro_batched_small_3d_convolution();
  auto device = open_cpu_device();
  ConvolutionKernels& kernels = device->convolutions();
  const auto [first_algorithm, second_algorithm] = two_algorithms(kernels, geometry, direction);
  const MicroBatchPlan plan = plan_of(shape, first_algorithm, second_algorithm);
  SCOPED_TRACE(describe(plan));
  ASSERT_EQ(plan.samples(), kMiniBatch);

  const testing::DirectionTensors tensors = direction_tensors(geometry, kMiniBatch, direction, 3);
  auto first_input = upload(*device, tensors.first_input);
  auto second_input = upload(*device, tensors.second_input);
  const std::size_t result_floats = tensors.expected.size();

  auto undivided_workspace = device->allocate(static_cast<std::size_t>(
      kernels.algorithms(geometry, kMiniBatch, direction).front().workspace_bytes));
  auto undivided = device->allocate(result_floats * sizeof(float));
  testing::run_direction(kernels, geometry, kMiniBatch, direction, first_algorithm,
                         first_input->data(), second_input->data(), undivided->data(), 0.0f,
                         undivided_workspace.get());
  const std::vector<float> undivided_result = download(*device, *undivided);
  ASSERT_TRUE(within_rounding(undivided_result, tensors.expected, tensors.magnitude));

  // One workspace, exactly the plan's largest requirement, serves every micro-batch.
  auto workspace = device->allocate(
      static_cast<std::size_t>(micro_batched_workspace_bytes(kernels, geometry, direction, plan)));
  // Both results are within rounding of the exact one, so of each other within twice that.
  const double relative = 2e-4;

  auto result = device->allocate(result_floats * sizeof(float));
  device->fill(result->data(), result_floats, std::numeric_limits<float>::quiet_NaN());
  run_micro_batched(kernels, geometry, direction, plan, first_input->data(), second_input->data(),
                    result->data(), 0.0f, workspace.get());
  EXPECT_TRUE(
      within_rounding(download(*device, *result), undivided_result, tensors.magnitude, relative));

  const std::vector<float> prior = random_floats(static_cast<std::int64_t>(result_floats), 5);
  std::vector<float> accumulated = undivided_result;
  std::vector<float> magnitude = tensors.magnitude;
  for (std::size_t i = 0; i < result_floats; ++i) {
    accumulated[i] += prior[i];
    magnitude[i] += std::fabs(prior[i]);
  }
  auto accumulating = upload(*device, prior);
  run_micro_batched(kernels, geometry, direction, plan, first_input->data(), second_input->data(),
                    accumulating->data(), 1.0f, workspace.get());
  EXPECT_TRUE(within_rounding(download(*device, *accumulating), accumulated, magnitude, relative));
}

std::string test_name(const ::testing::TestParamInfo<std::tuple<Direction, PlanShape>>& info) {
  static const char* const shapes[] = {"undivided", "single_samples", "three_five",
                                       "three_five_mixed", "mixed_uneven"};
  return to_string(std::get<0>(info.param)) + "_" +
         shapes[static_cast<int>(std::get<1>(info.param))];
}

INSTANTIATE_TEST_SUITE_P(
    Plans, MicroBatchedConvolution,
    ::testing::Combine(
        ::testing::Values(Direction::forward, Direction::backward_data, Direction::backward_filter),
        ::testing::Values(PlanShape::undivided, PlanShape::single_samples, PlanShape::three_five,
                          PlanShape::three_five_mixed, PlanShape::mixed_uneven)),
    test_name);

// The classic bug passes beta = 0 to every micro-batch of backward-filter, which keeps only the
// last micro-batch's gradient. Run that way through the kernels directly, the result is the last
// micro-batch's contribution, far from the undivided gradient; the runner matches the latter.
TEST(MicroBatchedBackwardFilter, AccumulatesWhereBetaZeroOnEveryMicroBatchWouldNot) {
  const ConvolutionGeometry geometry = micro_batched_small_3d_convolution();
  auto device = open_cpu_device();
  ConvolutionKernels& kernels = device->convolutions();
  const std::string algorithm =
      kernels.algorithms(geometry, kMiniBatch, Direction::backward_filter).front().name;
  const MicroBatchPlan plan{
      {{.samples = 3, .algorithm = algorithm}, {.samples = 5, .algorithm = algorithm}}};
  const testing::DirectionTensors tensors =
      direction_tensors(geometry, kMiniBatch, Direction::backward_filter, 9);
  auto x = upload(*device, tensors.first_input);
  auto dy = upload(*device, tensors.second_input);
  auto workspace = device->allocate(static_cast<std::size_t>(
      micro_batched_workspace_bytes(kernels, geometry, Direction::backward_filter, plan)));

  auto buggy = device->allocate(static_cast<std::size_t>(geometry.filter_floats()) * 4);
  for (std::int64_t first = 0; const MicroBatch& micro_batch : plan.micro_batches) {
    kernels.backward_filter(geometry, micro_batch.samples, micro_batch.algorithm,
                            x->data() + first * geometry.input_floats_per_sample(),
                            dy->data() + first * geometry.output_floats_per_sample(), buggy->data(),
                            0.0f, workspace.get());
    first += micro_batch.samples;
  }
  const std::vector<float> buggy_result = download(*device, *buggy);
  const std::int64_t last_first_sample = 3;
  const std::vector<float> last_only = testing::reference_backward_filter(
      geometry, 5,
      std::span(tensors.first_input)
          .subspan(
              static_cast<std::size_t>(last_first_sample * geometry.input_floats_per_sample())),
      std::span(tensors.second_input)
          .subspan(
              static_cast<std::size_t>(last_first_sample * geometry.output_floats_per_sample())));
  EXPECT_TRUE(within_rounding(buggy_result, last_only, tensors.magnitude));
  EXPECT_FALSE(within_rounding(buggy_result, tensors.expected, tensors.magnitude));

  auto gradient = device->allocate(static_cast<std::size_t>(geometry.filter_floats()) * 4);
  micro_batched_backward_filter(kernels, geometry, plan, x->data(), dy->data(), gradient->data(),
                                0.0f, workspace.get());
  EXPECT_TRUE(within_rounding(download(*device, *gradient), tensors.expected, tensors.magnitude));
}

TEST(MicroBatchedConvolutionWorkspace, IsTheLargestMicroBatchRequirement) {
  const ConvolutionGeometry geometry = micro_batched_small_3d_convolution();
  auto device = open_cpu_device();
  ConvolutionKernels& kernels = device->convolutions();
  const auto [first, second] = two_algorithms(kernels, geometry, Direction::forward);
  const MicroBatchPlan plan = plan_of(PlanShape::mixed_uneven, first, second);
  double largest = 0;
  for (const MicroBatch& micro_batch : plan.micro_batches) {
    for (const ConvolutionAlgorithm& offered :
         kernels.algorithms(geometry, micro_batch.samples, Direction::forward)) {
      if (offered.name == micro_batch.algorithm)
        largest = std::max(largest, offered.workspace_bytes);
    }
  }
  EXPECT_EQ(micro_batched_workspace_bytes(kernels, geometry, Direction::forward, plan), largest);
}

TEST(MicroBatchedConvolutionWorkspace, RejectsBadPlans) {
  const ConvolutionGeometry geometry = micro_batched_small_3d_convolution();
  auto device = open_cpu_device();
  ConvolutionKernels& kernels = device->convolutions();
  const std::string algorithm = kernels.algorithms(geometry, 2, Direction::forward).front().name;
  const MicroBatchPlan unknown{{{.samples = 2, .algorithm = "not-an-algorithm"}}};
  EXPECT_THROW(micro_batched_workspace_bytes(kernels, geometry, Direction::forward, unknown),
               std::invalid_argument);
  const MicroBatchPlan empty_micro_batch{
      {{.samples = 2, .algorithm = algorithm}, {.samples = 0, .algorithm = algorithm}}};
  EXPECT_THROW(
      micro_batched_workspace_bytes(kernels, geometry, Direction::forward, empty_micro_batch),
      std::invalid_argument);
  auto tensor = device->allocate(1024);
  EXPECT_THROW(micro_batched_forward(kernels, geometry, MicroBatchPlan{}, tensor->data(),
                                     tensor->data(), tensor->data(), 0.0f, nullptr),
               std::invalid_argument);
}

}  // namespace
}  // namespace tessera::kernels
