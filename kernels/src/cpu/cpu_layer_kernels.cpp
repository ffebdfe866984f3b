// The engine, stream and scratch buffers every CPU layer kernel shares; the element-wise and
// layout kernels that map one-to-one onto oneDNN primitives (eltwise, sum, binary, concat,
// reorder); the per-channel bias reduction. Pooling, fully connected, batch-norm, dropout, losses
// and optimizers have a file each beside this one.
#include "cpu/cpu_layer_kernels.hpp"

#include <cstddef>
#include <string>
#include <unordered_map>

#include "argument_check.hpp"
#include "cpu/dnnl_plain_memory.hpp"
#include "cpu/row_sums.hpp"

namespace tessera::kernels {
namespace {

using dnnl::memory;

void require_nonnegative(std::int64_t count, const char* kernel) {
  require_argument(count >= 0, kernel, "element count must be >= 0, got " + std::to_string(count));
}

// y = scale_a * a + scale_b * b through oneDNN's sum primitive, which accepts y == a (in place).
void weighted_sum(const dnnl::engine& engine, dnnl::stream& stream, std::int64_t count,
                  float scale_a, const float* a, float scale_b, const float* b, float* y) {
  if (count == 0) return;
  const memory::desc desc = plain_desc({count});
  const dnnl::sum::primitive_desc sum_pd(desc, {scale_a, scale_b}, {desc, desc}, engine);
  dnnl::sum(sum_pd).execute(stream, {{DNNL_ARG_MULTIPLE_SRC, wrap(desc, engine, a)},
                                     {DNNL_ARG_MULTIPLE_SRC + 1, wrap(desc, engine, b)},
                                     {DNNL_ARG_DST, wrap(desc, engine, y)}});
  stream.wait();
}

// Below it a plain loop, above it oneDNN's sum over the rank's threads.
constexpr std::int64_t kSmallAxpyFloats = 1 << 16;

}  // namespace

CpuLayerKernels::CpuLayerKernels() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {}

dnnl::memory CpuLayerKernels::scratch_memory(std::size_t slot, const dnnl::memory::desc& desc) {
  if (scratch_.size() <= slot) scratch_.resize(slot + 1);
  std::vector<float>& buffer = scratch_[slot];
  const std::size_t floats = (desc.get_size() + sizeof(float) - 1) / sizeof(float);
  if (buffer.size() < floats) buffer.resize(floats);
  return dnnl::memory(desc, engine_, buffer.data());
}

void CpuLayerKernels::leaky_relu_forward(std::int64_t count, float slope, const float* x,
                                         float* y) {
  require_nonnegative(count, "leaky_relu_forward");
  if (count == 0) return;
  const memory::desc desc = plain_desc({count});
  const dnnl::eltwise_forward::primitive_desc forward_pd(
      {dnnl::prop_kind::forward_training, dnnl::algorithm::eltwise_relu, desc, slope}, engine_);
  dnnl::eltwise_forward(forward_pd)
      .execute(stream_,
               {{DNNL_ARG_SRC, wrap(desc, engine_, x)}, {DNNL_ARG_DST, wrap(desc, engine_, y)}});
  stream_.wait();
}

void CpuLayerKernels::leaky_relu_backward(std::int64_t count, float slope, const float* x,
                                          const float* dy, float* dx) {
  require_nonnegative(count, "leaky_relu_backward");
  if (count == 0) return;
  const memory::desc desc = plain_desc({count});
  const dnnl::eltwise_forward::primitive_desc forward_pd(
      {dnnl::prop_kind::forward_training, dnnl::algorithm::eltwise_relu, desc, slope}, engine_);
  const dnnl::eltwise_backward::primitive_desc backward_pd(
      {dnnl::algorithm::eltwise_relu, desc, desc, slope}, engine_, forward_pd);
  dnnl::eltwise_backward(backward_pd)
      .execute(stream_, {{DNNL_ARG_SRC, wrap(desc, engine_, x)},
                         {DNNL_ARG_DIFF_DST, wrap(desc, engine_, dy)},
                         {DNNL_ARG_DIFF_SRC, wrap(desc, engine_, dx)}});
  stream_.wait();
}

namespace {

dnnl::algorithm gelu_algorithm(bool tanh_approximation) {
  return tanh_approximation ? dnnl::algorithm::eltwise_gelu_tanh
                            : dnnl::algorithm::eltwise_gelu_erf;
}

}  // namespace

void CpuLayerKernels::gelu_forward(std::int64_t count, bool tanh_approximation, const float* x,
                                   float* y) {
  require_nonnegative(count, "gelu_forward");
  if (count == 0) return;
  const memory::desc desc = plain_desc({count});
  const dnnl::eltwise_forward::primitive_desc forward_pd(
      {dnnl::prop_kind::forward_training, gelu_algorithm(tanh_approximation), desc, 0.0F}, engine_);
  dnnl::eltwise_forward(forward_pd)
      .execute(stream_,
               {{DNNL_ARG_SRC, wrap(desc, engine_, x)}, {DNNL_ARG_DST, wrap(desc, engine_, y)}});
  stream_.wait();
}

void CpuLayerKernels::gelu_backward(std::int64_t count, bool tanh_approximation, const float* x,
                                    const float* dy, float* dx) {
  require_nonnegative(count, "gelu_backward");
  if (count == 0) return;
  const memory::desc desc = plain_desc({count});
  const auto algorithm = gelu_algorithm(tanh_approximation);
  const dnnl::eltwise_forward::primitive_desc forward_pd(
      {dnnl::prop_kind::forward_training, algorithm, desc, 0.0F}, engine_);
  const dnnl::eltwise_backward::primitive_desc backward_pd({algorithm, desc, desc, 0.0F}, engine_,
                                                           forward_pd);
  dnnl::eltwise_backward(backward_pd)
      .execute(stream_, {{DNNL_ARG_SRC, wrap(desc, engine_, x)},
                         {DNNL_ARG_DIFF_DST, wrap(desc, engine_, dy)},
                         {DNNL_ARG_DIFF_SRC, wrap(desc, engine_, dx)}});
  stream_.wait();
}

void CpuLayerKernels::add(std::int64_t count, const float* a, const float* b, float* y) {
  require_nonnegative(count, "add");
  weighted_sum(engine_, stream_, count, 1.0f, a, 1.0f, b, y);
}

void CpuLayerKernels::axpy(std::int64_t count, float alpha, const float* x, float* y) {
  require_nonnegative(count, "axpy");
  // A halo face is summed run by run (tensor_box.cpp): runs of a few hundred floats, for which
  // making oneDNN's sum primitive costs far more than the sum itself.
  if (count < kSmallAxpyFloats) {
    for (std::int64_t i = 0; i < count; ++i) y[i] += alpha * x[i];
    return;
  }
  weighted_sum(engine_, stream_, count, 1.0f, y, alpha, x, y);
}

void CpuLayerKernels::bias_forward(std::int64_t batch, std::int64_t channels, std::int64_t spatial,
                                   const float* b, float* y) {
  require_nonnegative(batch * channels * spatial, "bias_forward");
  if (batch * channels * spatial == 0) return;
  const memory::desc y_desc = plain_desc({batch, channels, spatial});
  const memory::desc b_desc = plain_desc({1, channels, 1});
  const dnnl::binary::primitive_desc binary_pd(
      {dnnl::algorithm::binary_add, y_desc, b_desc, y_desc}, engine_);
  const memory y_memory = wrap(y_desc, engine_, y);
  dnnl::binary(binary_pd).execute(stream_, {{DNNL_ARG_SRC_0, y_memory},
                                            {DNNL_ARG_SRC_1, wrap(b_desc, engine_, b)},
                                            {DNNL_ARG_DST, y_memory}});
  stream_.wait();
}

// A plain loop: oneDNN 2.6's reduction primitive cannot accumulate into db (beta = 1) and sums
// in float, while a channel of a large 3D activation holds 10^7 elements; each contiguous
// (sample, channel) row is summed in double.
void CpuLayerKernels::bias_backward(std::int64_t batch, std::int64_t channels, std::int64_t spatial,
                                    const float* dy, float* db, float beta) {
  require_nonnegative(batch * channels * spatial, "bias_backward");
  const auto channel_count = static_cast<std::size_t>(channels);
  const auto row_length = static_cast<std::size_t>(spatial);
  std::vector<double> sums(channel_count, 0.0);
  for (std::size_t row = 0; row < static_cast<std::size_t>(batch) * channel_count; ++row) {
    const float* values = dy + row * row_length;
    sums[row % channel_count] +=
        sum_row(row_length, [values](std::size_t index, double& sum, double& /*unused*/) {
          sum += values[index];
        }).first;
  }
  for (std::size_t channel = 0; channel < channel_count; ++channel) {
    const double previous = beta == 0.0f ? 0.0 : static_cast<double>(beta) * db[channel];
    db[channel] = static_cast<float>(sums[channel] + previous);
  }
}

void CpuLayerKernels::concat_forward(std::int64_t batch, std::int64_t spatial,
                                     const std::vector<const float*>& inputs,
                                     const std::vector<std::int64_t>& channels, float* y) {
  const std::int64_t total_channels =
      concat_channel_total("concat_forward", inputs.size(), "input", channels);
  std::vector<memory::desc> input_descs;
  std::unordered_map<int, memory> arguments;
  for (std::size_t index = 0; index < inputs.size(); ++index) {
    if (channels[index] == 0) continue;  // oneDNN rejects empty inputs; they add nothing
    input_descs.push_back(plain_desc({batch, channels[index], spatial}));
    arguments.emplace(DNNL_ARG_MULTIPLE_SRC + static_cast<int>(input_descs.size() - 1),
                      wrap(input_descs.back(), engine_, inputs[index]));
  }
  if (batch * total_channels * spatial == 0) return;
  const memory::desc y_desc = plain_desc({batch, total_channels, spatial});
  arguments.emplace(DNNL_ARG_DST, wrap(y_desc, engine_, y));
  const dnnl::concat::primitive_desc concat_pd(y_desc, 1, input_descs, engine_);
  dnnl::concat(concat_pd).execute(stream_, arguments);
  stream_.wait();
}

// The split: each input's gradient is a strided window of dy, copied out by a reorder.
void CpuLayerKernels::concat_backward(std::int64_t batch, std::int64_t spatial, const float* dy,
                                      const std::vector<std::int64_t>& channels,
                                      const std::vector<float*>& dinputs) {
  const std::int64_t total_channels =
      concat_channel_total("concat_backward", dinputs.size(), "input gradient", channels);
  if (batch * total_channels * spatial == 0) return;
  const memory::desc dy_desc = plain_desc({batch, total_channels, spatial});
  std::int64_t channel_offset = 0;
  for (std::size_t index = 0; index < dinputs.size(); ++index) {
    const std::int64_t part_offset = channel_offset;
    channel_offset += channels[index];
    if (channels[index] == 0 || dinputs[index] == nullptr) continue;  // null: no gradient wanted
    const memory::dims part_dims{batch, channels[index], spatial};
    memory part = wrap(dy_desc.submemory_desc(part_dims, {0, part_offset, 0}), engine_, dy);
    memory dinput = wrap(plain_desc(part_dims), engine_, dinputs[index]);
    dnnl::reorder(part, dinput).execute(stream_, part, dinput);
  }
  stream_.wait();
}

}  // namespace tessera::kernels
