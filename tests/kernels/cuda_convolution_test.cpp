// Every cuDNN algorithm against the naive reference in all three directions, 1D to 3D, with
// stride, padding, dilation, groups and transposition; beta = 1 accumulation; micro-batched
// execution through the generic runner. Skips without a CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "convolution_test_support.hpp"
#include "cuda_test_support.hpp"
#include "tessera/kernels/micro_batched_convolution.hpp"

namespace tessera::kernels {
namespace {

using testing::Case;
using testing::direction_tensors;
using testing::download;
using testing::geometry;
using testing::random_floats;
using testing::run_direction;
using testing::upload;
using testing::within_rounding;

// Small shapes (the reference is naive); 3x3 stride-1 2D problems with 16+ channels and a 32x32
// image reach cuDNN's FFT and Winograd algorithms, the rest its GEMM-based ones.
const Case kCudaCases[] = {
    {"conv1d", geometry(3, 5, {11}, 3, 1, 1), 2},
    {"conv2d", geometry(3, 4, {7, 6}, 3, 1, 1), 2},
    {"conv2d_stride2", geometry(4, 8, {9, 9}, 3, 2, 1), 2},
    {"conv2d_dilation2", geometry(2, 3, {8, 8}, 3, 1, 2, 2), 2},
    {"conv2d_groups2", geometry(4, 6, {6, 6}, 3, 1, 1, 1, 2), 2},
    {"conv2d_16ch_fft_winograd_shape", geometry(16, 16, {32, 32}, 3, 1, 1), 2},
    {"conv3d", geometry(4, 8, {5, 5, 5}, 3, 1, 1), 2},
    {"conv3d_stride2", geometry(3, 4, {7, 7, 7}, 3, 2, 1), 2},
    {"conv3d_dilation2_groups2", geometry(4, 4, {6, 6, 6}, 3, 1, 2, 2, 2), 1},
    {"transposed2d", geometry(4, 3, {4, 4}, 3, 2, 1, 1, 1, true), 2},
    {"transposed2d_groups2", geometry(4, 6, {3, 4}, 3, 2, 0, 1, 2, true), 2},
    {"transposed3d", geometry(8, 4, {3, 3, 3}, 2, 2, 0, 1, 1, true), 2},
};

// GEMM-based and direct algorithms sum the same products as the reference in another order:
// within_rounding's 1e-4 of the magnitude. FFT and Winograd algorithms compute in a transform
// domain whose rounding grows with the transform size (Lavin and Gray, "Fast Algorithms for
// Convolutional Neural Networks", 2016, section 5: Winograd F(4x4, 3x3) errs ~10x more than direct
// convolution in float32), so they get 1e-3: a wrong tap is still a whole term off.
double tolerance_of(const std::string& algorithm) {
  // A graph-API engine's name does not say whether it transforms (cudnn_engine_names.hpp).
  const bool transform = algorithm.find("FFT") != std::string::npos ||
                         algorithm.find("WINOGRAD") != std::string::npos ||
                         algorithm.starts_with("ENGINE_");
  return transform ? 1e-3 : 1e-4;
}

using CudnnConvolution =
    testing::WithCudaDevice<::testing::TestWithParam<std::tuple<Case, Direction>>>;

TEST_P(CudnnConvolution, EveryAlgorithmMatchesTheReferenceAndBetaOneAccumulates) {
  const auto& [test_case, direction] = GetParam();
  const ConvolutionGeometry& conv = test_case.geometry;
  const std::int64_t batch = test_case.batch;
  ConvolutionKernels& kernels = gpu().convolutions();
  const std::vector<ConvolutionAlgorithm> algorithms = kernels.algorithms(conv, batch, direction);
  ASSERT_FALSE(algorithms.empty());

  const testing::DirectionTensors tensors = direction_tensors(conv, batch, direction, 7);
  auto first_input = upload(gpu(), tensors.first_input);
  auto second_input = upload(gpu(), tensors.second_input);
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
    EXPECT_GE(algorithm.workspace_bytes, 0);
    auto workspace = gpu().allocate(static_cast<std::size_t>(algorithm.workspace_bytes));
    // beta = 0 ignores what the result held before, even NaN.
    auto result = gpu().allocate(tensors.expected.size() * sizeof(float));
    gpu().fill(result->data(), result->floats(), std::numeric_limits<float>::quiet_NaN());
    run_direction(kernels, conv, batch, direction, algorithm.name, first_input->data(),
                  second_input->data(), result->data(), 0.0f, workspace.get());
    EXPECT_TRUE(within_rounding(download(gpu(), *result), tensors.expected, tensors.magnitude,
                                tolerance_of(algorithm.name)));

    auto accumulating = upload(gpu(), prior);
    run_direction(kernels, conv, batch, direction, algorithm.name, first_input->data(),
                  second_input->data(), accumulating->data(), 1.0f, workspace.get());
    EXPECT_TRUE(within_rounding(download(gpu(), *accumulating), accumulated, accumulated_magnitude,
                                tolerance_of(algorithm.name)));
  }
}

std::string case_name(const ::testing::TestParamInfo<std::tuple<Case, Direction>>& info) {
  return std::string(std::get<0>(info.param).name) + "_" + to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Geometries, CudnnConvolution,
                         ::testing::Combine(::testing::ValuesIn(kCudaCases),
                                            ::testing::Values(Direction::forward,
                                                              Direction::backward_data,
                                                              Direction::backward_filter)),
                         case_name);

using CudnnConvolutionAlgorithms = testing::WithCudaDevice<>;

// Whether the device's library offers the algorithm `name` for this problem at a batch of 2.
bool offers(Device& device, const ConvolutionGeometry& conv, Direction direction,
            const std::string& name) {
  const auto offered = device.convolutions().algorithms(conv, 2, direction);
  return std::any_of(offered.begin(), offered.end(),
                     [&](const ConvolutionAlgorithm& algorithm) { return algorithm.name == name; });
}

TEST_F(CudnnConvolutionAlgorithms, GemmAlgorithmsAreAlwaysOffered) {
  const ConvolutionGeometry conv = kCudaCases[6].geometry;  // conv3d
  EXPECT_TRUE(offers(gpu(), conv, Direction::forward, "IMPLICIT_GEMM"));
  EXPECT_TRUE(offers(gpu(), conv, Direction::backward_data, "ALGO_1"));
  EXPECT_TRUE(offers(gpu(), conv, Direction::backward_filter, "ALGO_1"));
}

// cuDNN's documentation names the backward algorithms that sum with atomics (data ALGO_0, filter
// ALGO_0 and ALGO_3); while only deterministic ones are kept, none of those is offered, and the
// GEMM ones still are. The device's setting is restored for the other tests.
TEST_F(CudnnConvolutionAlgorithms, DeterministicOnlyLeavesOutTheAtomicAlgorithms) {
  const ConvolutionGeometry conv = kCudaCases[6].geometry;  // conv3d
  for (const auto& algorithm :
       gpu().convolutions().algorithms(conv, 2, Direction::backward_filter)) {
    if (algorithm.name == "ALGO_0" || algorithm.name == "ALGO_3") {
      EXPECT_FALSE(algorithm.deterministic) << algorithm.name;
    }
  }
  gpu().convolutions().keep_deterministic_only(true);
  const bool data_atomic = offers(gpu(), conv, Direction::backward_data, "ALGO_0");
  const bool filter_atomic = offers(gpu(), conv, Direction::backward_filter, "ALGO_0");
  const bool filter_atomic_3 = offers(gpu(), conv, Direction::backward_filter, "ALGO_3");
  const bool data_gemm = offers(gpu(), conv, Direction::backward_data, "ALGO_1");
  const bool filter_gemm = offers(gpu(), conv, Direction::backward_filter, "ALGO_1");
  const bool forward_gemm = offers(gpu(), conv, Direction::forward, "IMPLICIT_GEMM");
  gpu().convolutions().keep_deterministic_only(false);
  EXPECT_FALSE(data_atomic);
  EXPECT_FALSE(filter_atomic);
  EXPECT_FALSE(filter_atomic_3);
  EXPECT_TRUE(data_gemm);
  EXPECT_TRUE(filter_gemm);
  EXPECT_TRUE(forward_gemm);
}

TEST_F(CudnnConvolutionAlgorithms, RefusesASmallWorkspaceAndAnUnknownName) {
  const ConvolutionGeometry conv = kCudaCases[5].geometry;
  const auto algorithms = gpu().convolutions().algorithms(conv, 2, Direction::forward);
  auto needing =
      std::find_if(algorithms.begin(), algorithms.end(),
                   [](const ConvolutionAlgorithm& each) { return each.workspace_bytes > 0; });
  ASSERT_NE(needing, algorithms.end());
  auto x = gpu().allocate(static_cast<std::size_t>(2 * conv.input_floats_per_sample()) * 4);
  auto w = gpu().allocate(static_cast<std::size_t>(conv.filter_floats()) * 4);
  auto y = gpu().allocate(static_cast<std::size_t>(2 * conv.output_floats_per_sample()) * 4);
  auto small = gpu().allocate(static_cast<std::size_t>(needing->workspace_bytes) - 1);
  EXPECT_THROW(gpu().convolutions().forward(conv, 2, needing->name, x->data(), w->data(), y->data(),
                                            0.0f, small.get()),
               std::invalid_argument);
  EXPECT_THROW(gpu().convolutions().forward(conv, 2, "no-such-algorithm", x->data(), w->data(),
                                            y->data(), 0.0f, nullptr),
               std::invalid_argument);
}

// The generic micro-batch runner on cuDNN: a 3 + 5 plan mixing the first and last algorithm
// offered equals the undivided run, backward-filter accumulating across micro-batches.
using CudnnMicroBatched = testing::WithCudaDevice<::testing::TestWithParam<Direction>>;

TEST_P(CudnnMicroBatched, MixedPlanEqualsTheReference) {
  const Direction direction = GetParam();
  const ConvolutionGeometry conv = kCudaCases[6].geometry;  // conv3d
  constexpr std::int64_t batch = 8;
  ConvolutionKernels& kernels = gpu().convolutions();
  // Algorithms offered for both micro-batch sizes.
  std::vector<std::string> offered;
  const auto for_five = kernels.algorithms(conv, 5, direction);
  for (const auto& algorithm : kernels.algorithms(conv, 3, direction)) {
    const bool also_five =
        std::any_of(for_five.begin(), for_five.end(),
                    [&](const ConvolutionAlgorithm& each) { return each.name == algorithm.name; });
    if (also_five) offered.push_back(algorithm.name);
  }
  ASSERT_FALSE(offered.empty());
  const MicroBatchPlan plan{
      {{.samples = 3, .algorithm = offered.front()}, {.samples = 5, .algorithm = offered.back()}}};
  const double workspace_bytes = micro_batched_workspace_bytes(kernels, conv, direction, plan);
  auto workspace = gpu().allocate(static_cast<std::size_t>(workspace_bytes));

  const testing::DirectionTensors tensors = direction_tensors(conv, batch, direction, 3);
  auto first_input = upload(gpu(), tensors.first_input);
  auto second_input = upload(gpu(), tensors.second_input);
  auto result = gpu().allocate(tensors.expected.size() * sizeof(float));
  gpu().fill(result->data(), result->floats(), std::numeric_limits<float>::quiet_NaN());
  switch (direction) {
    case Direction::forward:
      micro_batched_forward(kernels, conv, plan, first_input->data(), second_input->data(),
                            result->data(), 0.0f, workspace.get());
      break;
    case Direction::backward_data:
      micro_batched_backward_data(kernels, conv, plan, first_input->data(), second_input->data(),
                                  result->data(), 0.0f, workspace.get());
      break;
    case Direction::backward_filter:
      micro_batched_backward_filter(kernels, conv, plan, first_input->data(), second_input->data(),
                                    result->data(), 0.0f, workspace.get());
      break;
  }
  EXPECT_TRUE(
      within_rounding(download(gpu(), *result), tensors.expected, tensors.magnitude,
                      std::max(tolerance_of(offered.front()), tolerance_of(offered.back()))));
}

std::string direction_name(const ::testing::TestParamInfo<Direction>& direction) {
  return to_string(direction.param);
}

INSTANTIATE_TEST_SUITE_P(Directions, CudnnMicroBatched,
                         ::testing::Values(Direction::forward, Direction::backward_data,
                                           Direction::backward_filter),
                         direction_name);

}  // namespace
}  // namespace tessera::kernels
