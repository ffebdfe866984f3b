#include "tessera/kernels/micro_batched_convolution.hpp"

#include <algorithm>
#include <stdexcept>
#include <variant>

namespace tessera::kernels {
namespace {

void check_sizes(const MicroBatchPlan& plan) {
  if (plan.micro_batches.empty()) {
    throw std::invalid_argument("micro-batch plan has no micro-batches");
  }
  for (const MicroBatch& micro_batch : plan.micro_batches) {
    if (micro_batch.samples < 1) {
      throw std::invalid_argument("micro-batch plan '" + describe(plan) +
                                  "' has a micro-batch of " + std::to_string(micro_batch.samples) +
                                  " samples");
    }
  }
}

// Calls run(micro_batch, first_sample) for each micro-batch in order.
template <typename Run>
void for_each_micro_batch(const MicroBatchPlan& plan, Run run) {
  check_sizes(plan);
  std::int64_t first_sample = 0;
  for (const MicroBatch& micro_batch : plan.micro_batches) {
    run(micro_batch, first_sample);
    first_sample += micro_batch.samples;
  }
}

// The plan's largest workspace, or the first micro-batch whose algorithm the kernels do not offer
// at its size.
std::variant<double, const MicroBatch*> plan_workspace(ConvolutionKernels& kernels,
                                                       const ConvolutionGeometry& geometry,
                                                       Direction direction,
                                                       const MicroBatchPlan& plan) {
  check_sizes(plan);
  double largest_bytes = 0;
  for (const MicroBatch& micro_batch : plan.micro_batches) {
    const std::vector<ConvolutionAlgorithm> offered =
        kernels.algorithms(geometry, micro_batch.samples, direction);
    auto algorithm = std::find_if(
        offered.begin(), offered.end(),
        [&](const ConvolutionAlgorithm& each) { return each.name == micro_batch.algorithm; });
    if (algorithm == offered.end()) return &micro_batch;
    largest_bytes = std::max(largest_bytes, algorithm->workspace_bytes);
  }
  return largest_bytes;
}

}  // namespace

double micro_batched_workspace_bytes(ConvolutionKernels& kernels,
                                     const ConvolutionGeometry& geometry, Direction direction,
                                     const MicroBatchPlan& plan) {
  const auto workspace = plan_workspace(kernels, geometry, direction, plan);
  if (const auto* missing = std::get_if<const MicroBatch*>(&workspace)) {
    throw std::invalid_argument("micro-batch plan '" + describe(plan) + "' names algorithm '" +
                                (*missing)->algorithm + "', which the device does not offer for " +
                                to_string(direction) + " on " +
                                std::to_string((*missing)->samples) + " samples");
  }
  return std::get<double>(workspace);
}

void micro_batched_forward(ConvolutionKernels& kernels, const ConvolutionGeometry& geometry,
                           const MicroBatchPlan& plan, const float* x, const float* w, float* y,
                           float beta, DeviceMemory* workspace) {
  const std::int64_t x_floats = geometry.input_floats_per_sample();
  const std::int64_t y_floats = geometry.output_floats_per_sample();
  for_each_micro_batch(plan, [&](const MicroBatch& micro_batch, std::int64_t first) {
    kernels.forward(geometry, micro_batch.samples, micro_batch.algorithm, x + first * x_floats, w,
                    y + first * y_floats, beta, workspace);
  });
}

void micro_batched_backward_data(ConvolutionKernels& kernels, const ConvolutionGeometry& geometry,
                                 const MicroBatchPlan& plan, const float* dy, const float* w,
                                 float* dx, float beta, DeviceMemory* workspace) {
  const std::int64_t dx_floats = geometry.input_floats_per_sample();
  const std::int64_t dy_floats = geometry.output_floats_per_sample();
  for_each_micro_batch(plan, [&](const MicroBatch& micro_batch, std::int64_t first) {
    kernels.backward_data(geometry, micro_batch.samples, micro_batch.algorithm,
                          dy + first * dy_floats, w, dx + first * dx_floats, beta, workspace);
  });
}

void micro_batched_backward_filter(ConvolutionKernels& kernels, const ConvolutionGeometry& geometry,
                                   const MicroBatchPlan& plan, const float* x, const float* dy,
                                   float* dw, float beta, DeviceMemory* workspace) {
  const std::int64_t x_floats = geometry.input_floats_per_sample();
  const std::int64_t dy_floats = geometry.output_floats_per_sample();
  for_each_micro_batch(plan, [&](const MicroBatch& micro_batch, std::int64_t first) {
    // Every micro-batch after the first adds its contribution to the gradient.
    const float micro_batch_beta = first == 0 ? beta : 1.0f;
    kernels.backward_filter(geometry, micro_batch.samples, micro_batch.algorithm,
                            x + first * x_floats, dy + first * dy_floats, dw, micro_batch_beta,
                            workspace);
  });
}

void run_micro_batched(ConvolutionKernels& kernels, const ConvolutionGeometry& geometry,
                       Direction direction, const MicroBatchPlan& plan, const float* first_input,
                       const float* second_input, float* result, float beta,
                       DeviceMemory* workspace) {
  switch (direction) {
    case Direction::forward:
      return micro_batched_forward(kernels, geometry, plan, first_input, second_input, result, beta,
                                   workspace);
    case Direction::backward_data:
      return micro_batched_backward_data(kernels, geometry, plan, first_input, second_input, result,
                                         beta, workspace);
    case Direction::backward_filter:
      return micro_batched_backward_filter(kernels, geometry, plan, first_input, second_input,
                                           result, beta, workspace);
  }
  throw std::invalid_argument("unknown convolution direction");
}

}  // namespace tessera::kernels
