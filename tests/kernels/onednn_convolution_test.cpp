// Every convolution algorithm oneDNN offers on this CPU against the naive reference, in all three
// directions, for 1D to 3D geometries with stride, padding, dilation, groups and transposition.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>

#include "convolution_test_support.hpp"
#include "tessera/kernels/convolution_kernels.hpp"
#include "tessera/kernels/device.hpp"

namespace tessera::kernels {
namespace {

using testing::absolute;
using testing::Case;
using testing::direction_tensors;
using testing::download;
using testing::geometry;
using testing::random_floats;
using testing::run_direction;
using testing::upload;
using testing::within_rounding;

// Small enough for the naive reference under ASan; channel counts of 16 reach oneDNN's blocked
// and Winograd implementations, odd ones its plain fallbacks.
const Case kOnednnCases[] = {
    {"conv1d", geometry(3, 5, {11}, 3, 1, 1), 2},
    {"conv2d", geometry(3, 4, {7, 6}, 3, 1, 1), 2},
    {"conv2d_stride2", geometry(4, 8, {9, 9}, 3, 2, 1), 2},
    {"conv2d_dilation2", geometry(2, 3, {8, 8}, 3, 1, 2, 2), 2},
    {"conv2d_groups2", geometry(4, 6, {6, 6}, 3, 1, 1, 1, 2), 2},
    {"conv2d_16ch_winograd_shape", geometry(16, 16, {6, 6}, 3, 1, 1), 2},
    {"conv3d", geometry(4, 8, {5, 5, 5}, 3, 1, 1), 2},
    {"conv3d_16ch", geometry(16, 16, {4, 4, 4}, 3, 1, 1), 2},
    {"conv3d_stride2", geometry(3, 4, {7, 7, 7}, 3, 2, 1), 2},
    {"conv3d_dilation2_groups2", geometry(4, 4, {6, 6, 6}, 3, 1, 2, 2, 2), 1},
    {"transposed2d", geometry(4, 3, {4, 4}, 3, 2, 1, 1, 1, true), 2},
    {"transposed2d_groups2", geometry(4, 6, {3, 4}, 3, 2, 0, 1, 2, true), 2},
    {"transposed3d", geometry(8, 4, {3, 3, 3}, 2, 2, 0, 1, 1, true), 2},
    {"transposed3d_16ch", geometry(16, 16, {2, 2, 2}, 2, 2, 0, 1, 1, true), 2},
};

class OnednnConvolution : public ::testing::TestWithParam<std::tuple<Case, Direction>> {};

TEST_P(OnednnConvolution, EveryAlgorithmMatchesTheReferenceAndBetaOneAccumulates) {
  const auto& [test_case, direction] = GetParam();
  const ConvolutionGeometry& geometry = test_case.geometry;
  const std::int64_t batch = test_case.batch;
  auto device = open_cpu_device();
  ConvolutionKernels& kernels = device->convolutions();
  const std::vector<ConvolutionAlgorithm> algorithms =
      kernels.algorithms(geometry, batch, direction);
  ASSERT_FALSE(algorithms.empty());

  const testing::DirectionTensors tensors = direction_tensors(geometry, batch, direction, 7);
  auto first_input = upload(*device, tensors.first_input);
  auto second_input = upload(*device, tensors.second_input);
  const std::vector<float> prior =
      random_floats(static_cast<std::int64_t>(tensors.expected.size()), 11);
  std::vector<float> accumulated = tensors.expected;
  std::vector<float> accumulated_magnitude = tensors.magnitude;
  for (std::size_t i = 0; i < prior.size(); ++i) {
    accumulated[i] += prior[i];
    accumulated_magnitude[i] += std::fabs(prior[i]);
  }

  for (const ConvolutionAlgorithm& algorithm : algorithms) {
    SCOPED_TRACE(algorithm.name);
    // Exactly the advertised bytes: ASan reports any use beyond them.
    auto workspace = device->allocate(static_cast<std::size_t>(algorithm.workspace_bytes));
    // beta = 0 ignores what the result held before, even NaN.
    auto result = device->allocate(tensors.expected.size() * sizeof(float));
    device->fill(result->data(), result->floats(), std::numeric_limits<float>::quiet_NaN());
    run_direction(kernels, geometry, batch, direction, algorithm.name, first_input->data(),
                  second_input->data(), result->data(), 0.0f, workspace.get());
    EXPECT_TRUE(within_rounding(download(*device, *result), tensors.expected, tensors.magnitude));

    auto accumulating = upload(*device, prior);
    run_direction(kernels, geometry, batch, direction, algorithm.name, first_input->data(),
                  second_input->data(), accumulating->data(), 1.0f, workspace.get());
    EXPECT_TRUE(
        within_rounding(download(*device, *accumulating), accumulated, accumulated_magnitude));
  }
}

std::string onednn_case_name(const ::testing::TestParamInfo<std::tuple<Case, Direction>>& info) {
  return std::string(std::get<0>(info.param).name) + "_" + to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Geometries, OnednnConvolution,
                         ::testing::Combine(::testing::ValuesIn(kOnednnCases),
                                            ::testing::Values(Direction::forward,
                                                              Direction::backward_data,
                                                              Direction::backward_filter)),
                         onednn_case_name);

// Any beta scales what the result held: the sum post-op and the accumulating reorder both carry
// it (beta = 1 alone would not tell a dropped scale from a kept one).
TEST(OnednnConvolutionAlgorithms, BetaScalesThePreviousResult) {
  auto device = open_cpu_device();
  const float beta = -0.5f;
  for (const Case& test_case : {kOnednnCases[1], kOnednnCases[7]}) {
    for (Direction direction :
         {Direction::forward, Direction::backward_data, Direction::backward_filter}) {
      const testing::DirectionTensors tensors =
          direction_tensors(test_case.geometry, test_case.batch, direction, 21);
      auto first_input = upload(*device, tensors.first_input);
      auto second_input = upload(*device, tensors.second_input);
      const std::vector<float> prior =
          random_floats(static_cast<std::int64_t>(tensors.expected.size()), 23);
      std::vector<float> expected = tensors.expected;
      std::vector<float> magnitude = tensors.magnitude;
      for (std::size_t i = 0; i < prior.size(); ++i) {
        expected[i] += beta * prior[i];
        magnitude[i] += std::fabs(beta * prior[i]);
      }
      for (const ConvolutionAlgorithm& algorithm :
           device->convolutions().algorithms(test_case.geometry, test_case.batch, direction)) {
        SCOPED_TRACE(std::string(test_case.name) + " " + to_string(direction) + " " +
                     algorithm.name);
        auto workspace = device->allocate(static_cast<std::size_t>(algorithm.workspace_bytes));
        auto result = upload(*device, prior);
        run_direction(device->convolutions(), test_case.geometry, test_case.batch, direction,
                      algorithm.name, first_input->data(), second_input->data(), result->data(),
                      beta, workspace.get());
        EXPECT_TRUE(within_rounding(download(*device, *result), expected, magnitude));
      }
    }
  }
}

TEST(OnednnConvolutionAlgorithms, NamesAreUniqueAndSayTheLayout) {
  auto device = open_cpu_device();
  for (const Case& test_case : kOnednnCases) {
    for (Direction direction :
         {Direction::forward, Direction::backward_data, Direction::backward_filter}) {
      std::set<std::string> names;
      for (const ConvolutionAlgorithm& algorithm :
           device->convolutions().algorithms(test_case.geometry, test_case.batch, direction)) {
        EXPECT_TRUE(names.insert(algorithm.name).second) << algorithm.name;
        const bool says_layout = algorithm.name.ends_with("/plain") ||
                                 algorithm.name.ends_with("/blocked") ||
                                 algorithm.name.ends_with("/reordered");
        EXPECT_TRUE(says_layout) << algorithm.name;
        EXPECT_EQ(algorithm.name.find(','), std::string::npos) << "profiles are CSV";
        EXPECT_GE(algorithm.workspace_bytes, 0);
      }
    }
  }
}

TEST(OnednnConvolutionAlgorithms, BlockedAlgorithmsCountTheirReorderBuffers) {
  auto device = open_cpu_device();
  const ConvolutionGeometry conv = kOnednnCases[7].geometry;  // conv3d_16ch
  // A blocked implementation reorders at least one tensor into the workspace.
  const std::int64_t smallest_tensor_bytes =
      std::min({2 * conv.input_floats_per_sample(), 2 * conv.output_floats_per_sample(),
                conv.filter_floats()}) *
      static_cast<std::int64_t>(sizeof(float));
  bool any_blocked = false;
  for (const ConvolutionAlgorithm& algorithm :
       device->convolutions().algorithms(conv, 2, Direction::forward)) {
    if (!algorithm.name.ends_with("/blocked")) continue;
    any_blocked = true;
    EXPECT_GE(algorithm.workspace_bytes, static_cast<double>(smallest_tensor_bytes))
        << algorithm.name;
  }
  EXPECT_TRUE(any_blocked) << "oneDNN offers a blocked layout for 16 channels on every x86 CPU";
}

TEST(OnednnConvolutionAlgorithms, RefusesASmallWorkspaceAndAnUnknownName) {
  auto device = open_cpu_device();
  const ConvolutionGeometry conv = kOnednnCases[7].geometry;
  const auto algorithms = device->convolutions().algorithms(conv, 2, Direction::forward);
  // A blocked algorithm needs its reorder buffers whatever beta is.
  auto needing = std::find_if(
      algorithms.begin(), algorithms.end(),
      [](const ConvolutionAlgorithm& each) { return each.name.ends_with("/blocked"); });
  ASSERT_NE(needing, algorithms.end());
  auto x = device->allocate(static_cast<std::size_t>(2 * conv.input_floats_per_sample()) * 4);
  auto w = device->allocate(static_cast<std::size_t>(conv.filter_floats()) * 4);
  auto y = device->allocate(static_cast<std::size_t>(2 * conv.output_floats_per_sample()) * 4);
  auto small = device->allocate(64);
  EXPECT_THROW(device->convolutions().forward(conv, 2, needing->name, x->data(), w->data(),
                                              y->data(), 0.0f, small.get()),
               std::invalid_argument);
  EXPECT_THROW(device->convolutions().forward(conv, 2, needing->name, x->data(), w->data(),
                                              y->data(), 0.0f, nullptr),
               std::invalid_argument);
  try {
    device->convolutions().forward(conv, 2, "no-such-algorithm", x->data(), w->data(), y->data(),
                                   0.0f, nullptr);
    FAIL() << "an unknown algorithm ran";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find(algorithms.front().name), std::string::npos)
        << "the message lists what is offered: " << error.what();
  }
}

TEST(OnednnConvolutionAlgorithms, RejectsInconsistentGeometry) {
  auto device = open_cpu_device();
  ConvolutionGeometry conv = kOnednnCases[1].geometry;
  conv.output_spatial[0] += 1;
  EXPECT_THROW(device->convolutions().algorithms(conv, 2, Direction::forward),
               std::invalid_argument);
  conv = kOnednnCases[4].geometry;
  conv.groups = 4;  // 6 output channels are not a multiple of 4
  EXPECT_THROW(device->convolutions().algorithms(conv, 2, Direction::forward),
               std::invalid_argument);
}

}  // namespace
}  // namespace tessera::kernels
