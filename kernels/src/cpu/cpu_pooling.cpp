// Max and average pooling (1D to 3D) on oneDNN's pooling primitives. Two oneDNN 2.6 specifics:
// - On plain NC(D)HW tensors it only has a reference-like implementation (simple_nchw) while
//   its JIT kernels take channels-last; reordering in, pooling channels-last and reordering out
//   is several times faster (docs/measurements/2026-11-21.md), so that is what runs.
// - Its max-pooling backward needs the workspace of a training-mode forward (the argmax per
//   window) instead of cuDNN's (x, y) pair, so pooling_backward re-runs the forward on x into
//   scratch buffers: one extra forward per backward, the price of the stateless interface.
#include <algorithm>
#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "argument_check.hpp"
#include "cpu/cpu_layer_kernels.hpp"
#include "cpu/dnnl_plain_memory.hpp"

namespace tessera::kernels {
namespace {

using dnnl::memory;

struct PoolingProblem {
  dnnl::algorithm algorithm;
  memory::desc input;  // the caller's plain NC(D)HW tensors
  memory::desc output;
  memory::desc input_channels_last;  // what the primitives run on (see the file comment)
  memory::desc output_channels_last;
  memory::dims stride;
  memory::dims kernel;
  memory::dims padding_low;
  memory::dims padding_high;
};

std::string axis_text(std::size_t axis) {
  return "spatial axis " + std::to_string(axis);
}

// oneDNN wants the high-side padding that makes (input + low + high - kernel) / stride + 1 equal
// the output exactly; the geometry's symmetric padding is the low side, and the high side follows
// from the output extent (floor or ceil mode alike).
PoolingProblem pooling_problem(const PoolingGeometry& geometry, std::int64_t batch) {
  constexpr const char* kernel_name = "pooling";
  const std::size_t rank = geometry.input_spatial.size();
  require_argument(rank >= 1 && rank <= 3, kernel_name,
                   "1 to 3 spatial axes expected, got " + std::to_string(rank));
  require_argument(geometry.output_spatial.size() == rank && geometry.kernel.size() == rank &&
                       geometry.stride.size() == rank && geometry.padding.size() == rank,
                   kernel_name,
                   "output_spatial, kernel, stride and padding need one entry per spatial axis (" +
                       std::to_string(rank) + ")");
  require_argument(batch >= 1 && geometry.channels >= 1, kernel_name,
                   "batch and channels must be >= 1");
  PoolingProblem problem;
  problem.algorithm =
      geometry.max ? dnnl::algorithm::pooling_max : dnnl::algorithm::pooling_avg_exclude_padding;
  memory::dims input_dims{batch, geometry.channels};
  memory::dims output_dims{batch, geometry.channels};
  for (std::size_t axis = 0; axis < rank; ++axis) {
    const std::int64_t input = geometry.input_spatial[axis];
    const std::int64_t output = geometry.output_spatial[axis];
    const std::int64_t kernel = geometry.kernel[axis];
    const std::int64_t stride = geometry.stride[axis];
    const std::int64_t padding = geometry.padding[axis];
    require_argument(input >= 1 && kernel >= 1 && stride >= 1 && padding >= 0 && padding < kernel,
                     kernel_name,
                     axis_text(axis) + ": need input >= 1, kernel >= 1, stride >= 1 and " +
                         "0 <= padding < kernel");
    const std::int64_t floor_output = (input + 2 * padding - kernel) / stride + 1;
    const std::int64_t ceil_output = (input + 2 * padding - kernel + stride - 1) / stride + 1;
    require_argument(
        input + 2 * padding >= kernel && output >= floor_output && output <= ceil_output,
        kernel_name,
        axis_text(axis) + ": output extent " + std::to_string(output) +
            " does not follow from input " + std::to_string(input) + ", kernel " +
            std::to_string(kernel) + ", stride " + std::to_string(stride) + " and padding " +
            std::to_string(padding) + " (expected " + std::to_string(floor_output) + " or " +
            std::to_string(ceil_output) + ")");
    input_dims.push_back(input);
    output_dims.push_back(output);
    problem.kernel.push_back(kernel);
    problem.stride.push_back(stride);
    problem.padding_low.push_back(padding);
    problem.padding_high.push_back(
        std::max<std::int64_t>(0, (output - 1) * stride + kernel - input - padding));
  }
  problem.input = plain_desc(input_dims);
  problem.output = plain_desc(output_dims);
  constexpr memory::format_tag channels_last[] = {memory::format_tag::nwc, memory::format_tag::nhwc,
                                                  memory::format_tag::ndhwc};
  problem.input_channels_last =
      memory::desc(input_dims, memory::data_type::f32, channels_last[rank - 1]);
  problem.output_channels_last =
      memory::desc(output_dims, memory::data_type::f32, channels_last[rank - 1]);
  return problem;
}

dnnl::pooling_forward::primitive_desc forward_primitive(const PoolingProblem& problem,
                                                        dnnl::prop_kind kind,
                                                        const dnnl::engine& engine) {
  return {{kind, problem.algorithm, problem.input_channels_last, problem.output_channels_last,
           problem.stride, problem.kernel, problem.padding_low, problem.padding_high},
          engine};
}

// Scratch slots of the pooling kernels (see CpuLayerKernels::scratch_memory).
enum PoolingScratch : std::size_t { kInput, kOutput, kWorkspace, kOutputGradient, kInputGradient };

memory channels_last_copy(memory copy, const memory::desc& plain, const float* data,
                          const dnnl::engine& engine, dnnl::stream& stream) {
  memory source = wrap(plain, engine, data);
  dnnl::reorder(source, copy).execute(stream, source, copy);
  return copy;
}

void copy_to_plain(memory& channels_last, const memory::desc& plain, float* data,
                   const dnnl::engine& engine, dnnl::stream& stream) {
  memory destination = wrap(plain, engine, data);
  dnnl::reorder(channels_last, destination).execute(stream, channels_last, destination);
  stream.wait();
}

}  // namespace

void CpuLayerKernels::pooling_forward(const PoolingGeometry& geometry, std::int64_t batch,
                                      const float* x, float* y) {
  const PoolingProblem problem = pooling_problem(geometry, batch);
  const auto forward_pd = forward_primitive(problem, dnnl::prop_kind::forward_inference, engine_);
  const memory x_channels_last = channels_last_copy(
      scratch_memory(kInput, problem.input_channels_last), problem.input, x, engine_, stream_);
  memory y_channels_last = scratch_memory(kOutput, problem.output_channels_last);
  dnnl::pooling_forward(forward_pd)
      .execute(stream_, {{DNNL_ARG_SRC, x_channels_last}, {DNNL_ARG_DST, y_channels_last}});
  copy_to_plain(y_channels_last, problem.output, y, engine_, stream_);
}

void CpuLayerKernels::pooling_backward(const PoolingGeometry& geometry, std::int64_t batch,
                                       const float* x, const float* /*y: see file comment*/,
                                       const float* dy, float* dx) {
  const PoolingProblem problem = pooling_problem(geometry, batch);
  const auto forward_pd = forward_primitive(problem, dnnl::prop_kind::forward_training, engine_);
  const dnnl::pooling_backward::primitive_desc backward_pd(
      {problem.algorithm, problem.input_channels_last, problem.output_channels_last, problem.stride,
       problem.kernel, problem.padding_low, problem.padding_high},
      engine_, forward_pd);
  memory dx_channels_last = scratch_memory(kInputGradient, problem.input_channels_last);
  std::unordered_map<int, memory> backward_arguments{
      {DNNL_ARG_DIFF_DST,
       channels_last_copy(scratch_memory(kOutputGradient, problem.output_channels_last),
                          problem.output, dy, engine_, stream_)},
      {DNNL_ARG_DIFF_SRC, dx_channels_last}};
  if (geometry.max) {
    const memory workspace = scratch_memory(kWorkspace, forward_pd.workspace_desc());
    const memory scratch_output = scratch_memory(kOutput, problem.output_channels_last);
    dnnl::pooling_forward(forward_pd)
        .execute(stream_, {{DNNL_ARG_SRC,
                            channels_last_copy(scratch_memory(kInput, problem.input_channels_last),
                                               problem.input, x, engine_, stream_)},
                           {DNNL_ARG_DST, scratch_output},
                           {DNNL_ARG_WORKSPACE, workspace}});
    backward_arguments.emplace(DNNL_ARG_WORKSPACE, workspace);
  }
  dnnl::pooling_backward(backward_pd).execute(stream_, backward_arguments);
  copy_to_plain(dx_channels_last, problem.input, dx, engine_, stream_);
}

}  // namespace tessera::kernels
