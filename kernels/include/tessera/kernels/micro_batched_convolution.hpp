#pragma once
// One direction of a convolution run as a MicroBatchPlan's micro-batches (mu-cuDNN): each
// micro-batch is a contiguous slice of the batch (tensors are batch-outermost) run with its own
// algorithm, and one workspace of the plan's largest requirement serves them all.
//
// Forward and backward-data write disjoint slices of their result, so each micro-batch gets the
// caller's beta. Backward-filter sums over the whole batch into one filter gradient: the caller's
// beta applies to the first micro-batch only and the others accumulate (beta = 1); passing the
// caller's beta = 0 to every micro-batch would keep only the last micro-batch's contribution.
#include <cstdint>

#include "tessera/core/micro_batching/micro_batch_plan.hpp"
#include "tessera/kernels/convolution_kernels.hpp"

namespace tessera::kernels {

// The workspace bytes the plan needs on these kernels: the largest over its micro-batches of the
// bytes `kernels.algorithms()` gives for the micro-batch's algorithm. Throws
// std::invalid_argument when a micro-batch is empty or names an algorithm the kernels do not
// offer for its size.
double micro_batched_workspace_bytes(ConvolutionKernels& kernels,
                                     const ConvolutionGeometry& geometry, Direction direction,
                                     const MicroBatchPlan& plan);

// The batch is plan.samples(); pointers and beta as in ConvolutionKernels.
void micro_batched_forward(ConvolutionKernels& kernels, const ConvolutionGeometry& geometry,
                           const MicroBatchPlan& plan, const float* x, const float* w, float* y,
                           float beta, DeviceMemory* workspace);
void micro_batched_backward_data(ConvolutionKernels& kernels, const ConvolutionGeometry& geometry,
                                 const MicroBatchPlan& plan, const float* dy, const float* w,
                                 float* dx, float beta, DeviceMemory* workspace);
void micro_batched_backward_filter(ConvolutionKernels& kernels, const ConvolutionGeometry& geometry,
                                   const MicroBatchPlan& plan, const float* x, const float* dy,
                                   float* dw, float beta, DeviceMemory* workspace);

// The one of the three above that runs `direction`, its inputs in ConvolutionKernels' order
// (forward: x, w -> y; backward-data: dy, w -> dx; backward-filter: x, dy -> dw).
void run_micro_batched(ConvolutionKernels& kernels, const ConvolutionGeometry& geometry,
                       Direction direction, const MicroBatchPlan& plan, const float* first_input,
                       const float* second_input, float* result, float beta,
                       DeviceMemory* workspace);

}  // namespace tessera::kernels
