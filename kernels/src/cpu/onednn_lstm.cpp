// LSTM layers as oneDNN's lstm_forward/lstm_backward primitives (one layer, one or two
// directions, with the projection of LSTMP where there is one). oneDNN wants sequences time-major
// (T x N x C) and picks its own weight layouts for each pass: the kernels transpose N x C x T in
// and out, keep the time-major input and output beside oneDNN's workspace for backward, and
// reorder weights and weight gradients from and to the plain layouts the parameters have.
#include <algorithm>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "argument_check.hpp"
#include "cpu/cpu_sequence_kernels.hpp"
#include "cpu/dnnl_plain_memory.hpp"

namespace tessera::kernels {
namespace {

using dnnl::memory;
using tag = memory::format_tag;
constexpr auto f32 = memory::data_type::f32;

struct Descs {
  memory::desc src, src_iter, src_iter_c, weights_layer, weights_iter, bias, projection, dst;
};

Descs user_descs(const LstmShape& s) {
  const std::int64_t d = s.directions();
  return {.src = {{s.steps, s.batch, s.input}, f32, tag::tnc},
          .src_iter = {{1, d, s.batch, s.recurrent()}, f32, tag::ldnc},
          .src_iter_c = {{1, d, s.batch, s.hidden}, f32, tag::ldnc},
          .weights_layer = {{1, d, s.input, 4, s.hidden}, f32, tag::ldigo},
          .weights_iter = {{1, d, s.recurrent(), 4, s.hidden}, f32, tag::ldigo},
          .bias = {{1, d, 4, s.hidden}, f32, tag::ldgo},
          .projection = s.projection > 0
                            ? memory::desc({1, d, s.hidden, s.projection}, f32, tag::ldio)
                            : memory::desc(),
          .dst = {{s.steps, s.batch, s.output_channels()}, f32, tag::tnc}};
}

// Floats of the larger of the initial hidden state and cell state (D x N x max(R, H)).
std::int64_t initial_state_floats(const LstmShape& s) {
  return s.directions() * s.batch * std::max(s.recurrent(), s.hidden);
}

memory::desc any(const memory::desc& desc) {
  return desc.is_zero() ? desc : memory::desc(desc.dims(), f32, tag::any);
}

dnnl::rnn_direction direction_of(const LstmShape& s) {
  return s.bidirectional ? dnnl::rnn_direction::bidirectional_concat
                         : dnnl::rnn_direction::unidirectional_left2right;
}

dnnl::lstm_forward::primitive_desc forward_pd(const dnnl::engine& engine, const LstmShape& s) {
  const Descs u = user_descs(s);
  const dnnl::lstm_forward::desc desc(dnnl::prop_kind::forward_training, direction_of(s), u.src,
                                      u.src_iter, u.src_iter_c, any(u.weights_layer),
                                      any(u.weights_iter), memory::desc(), any(u.projection),
                                      u.bias, u.dst, memory::desc(), memory::desc());
  return {desc, engine};
}

void require_shape(const LstmShape& s, const char* kernel) {
  require_argument(
      s.batch >= 1 && s.steps >= 1 && s.input >= 1 && s.hidden >= 1 && s.projection >= 0, kernel,
      "batch, steps, input and hidden must be >= 1, projection >= 0");
}

std::int64_t workspace_floats_of(const dnnl::lstm_forward::primitive_desc& pd) {
  return static_cast<std::int64_t>((pd.workspace_desc().get_size() + sizeof(float) - 1) /
                                   sizeof(float));
}

// N x C x T to T x N x C and back.
void to_time_major(std::int64_t n, std::int64_t c, std::int64_t t, const float* from, float* to) {
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < c; ++j)
      for (std::int64_t k = 0; k < t; ++k) to[(k * n + i) * c + j] = from[(i * c + j) * t + k];
}
void from_time_major(std::int64_t n, std::int64_t c, std::int64_t t, const float* from, float* to) {
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < c; ++j)
      for (std::int64_t k = 0; k < t; ++k) to[(i * c + j) * t + k] = from[(k * n + i) * c + j];
}

// `user` (plain, caller-owned) as the primitive wants it: itself, or a reordered copy.
memory as_wanted(const dnnl::engine& engine, dnnl::stream& stream, const memory::desc& wanted,
                 const memory::desc& user_desc, const float* user) {
  memory plain = wrap(user_desc, engine, user);
  if (wanted == user_desc) return plain;
  memory converted(wanted, engine);
  dnnl::reorder(plain, converted).execute(stream, plain, converted);
  return converted;
}

// A zeroed gradient in the primitive's layout (oneDNN adds its weight gradients into it).
memory zeroed(const dnnl::engine& engine, const memory::desc& desc) {
  memory gradient(desc, engine);
  std::memset(gradient.get_data_handle(), 0, desc.get_size());
  return gradient;
}

void store(const dnnl::engine& engine, dnnl::stream& stream, memory& gradient,
           const memory::desc& user_desc, float* user) {
  memory plain = wrap(user_desc, engine, user);
  dnnl::reorder(gradient, plain).execute(stream, gradient, plain);
}

}  // namespace

std::int64_t CpuSequenceKernels::lstm_workspace_floats(const LstmShape& s) {
  require_shape(s, "lstm_workspace_floats");
  return workspace_floats_of(forward_pd(engine_, s)) + s.steps * s.batch * s.input +
         s.steps * s.batch * s.output_channels();
}

void CpuSequenceKernels::lstm_forward(const LstmShape& s, const float* x,
                                      const LstmWeights& weights, float* y, float* workspace) {
  require_shape(s, "lstm_forward");
  const auto pd = forward_pd(engine_, s);
  const Descs u = user_descs(s);
  float* src = workspace + workspace_floats_of(pd);
  float* dst = src + s.steps * s.batch * s.input;
  to_time_major(s.batch, s.input, s.steps, x, src);
  // The zero initial state, given explicitly: without it oneDNN 2.6's unidirectional backward
  // takes a state it never wrote for the first step's recurrent-weight gradient.
  const std::vector<float> zeros(static_cast<std::size_t>(initial_state_floats(s)), 0.0F);
  std::unordered_map<int, memory> arguments{
      {DNNL_ARG_SRC_LAYER, wrap(u.src, engine_, src)},
      {DNNL_ARG_SRC_ITER, wrap(u.src_iter, engine_, zeros.data())},
      {DNNL_ARG_SRC_ITER_C, wrap(u.src_iter_c, engine_, zeros.data())},
      {DNNL_ARG_WEIGHTS_LAYER,
       as_wanted(engine_, stream_, pd.weights_layer_desc(), u.weights_layer, weights.input)},
      {DNNL_ARG_WEIGHTS_ITER,
       as_wanted(engine_, stream_, pd.weights_iter_desc(), u.weights_iter, weights.recurrent)},
      {DNNL_ARG_BIAS, wrap(u.bias, engine_, weights.bias)},
      {DNNL_ARG_DST_LAYER, wrap(u.dst, engine_, dst)},
      {DNNL_ARG_WORKSPACE, wrap(pd.workspace_desc(), engine_, workspace)}};
  if (s.projection > 0) {
    arguments.emplace(DNNL_ARG_WEIGHTS_PROJECTION,
                      as_wanted(engine_, stream_, pd.weights_projection_desc(), u.projection,
                                weights.projection));
  }
  dnnl::lstm_forward(pd).execute(stream_, arguments);
  stream_.wait();
  from_time_major(s.batch, s.output_channels(), s.steps, dst, y);
}

void CpuSequenceKernels::lstm_backward(const LstmShape& s, const LstmWeights& weights,
                                       const float* workspace, const float* dy, float* dx,
                                       const LstmGradients& gradients) {
  require_shape(s, "lstm_backward");
  const auto hint = forward_pd(engine_, s);
  const Descs u = user_descs(s);
  const dnnl::lstm_backward::desc desc(
      dnnl::prop_kind::backward, direction_of(s), u.src, u.src_iter, u.src_iter_c,
      any(u.weights_layer), any(u.weights_iter), memory::desc(), any(u.projection), u.bias, u.dst,
      memory::desc(), memory::desc(), u.src, u.src_iter, u.src_iter_c, any(u.weights_layer),
      any(u.weights_iter), memory::desc(), any(u.projection), u.bias, u.dst, memory::desc(),
      memory::desc());
  const dnnl::lstm_backward::primitive_desc pd(desc, engine_, hint);
  const float* src = workspace + workspace_floats_of(hint);
  const float* dst = src + s.steps * s.batch * s.input;
  std::vector<float> diff_dst(static_cast<std::size_t>(s.steps * s.batch * s.output_channels()));
  std::vector<float> diff_src(static_cast<std::size_t>(s.steps * s.batch * s.input));
  to_time_major(s.batch, s.output_channels(), s.steps, dy, diff_dst.data());
  auto diff_layer = zeroed(engine_, pd.diff_weights_layer_desc());
  auto diff_iter = zeroed(engine_, pd.diff_weights_iter_desc());
  auto diff_bias = zeroed(engine_, pd.diff_bias_desc());
  const std::vector<float> zeros(static_cast<std::size_t>(initial_state_floats(s)), 0.0F);
  std::vector<float> diff_state(zeros.size());  // the initial state's gradient, not wanted
  std::unordered_map<int, memory> arguments{
      {DNNL_ARG_SRC_LAYER, wrap(u.src, engine_, src)},
      {DNNL_ARG_SRC_ITER, wrap(u.src_iter, engine_, zeros.data())},
      {DNNL_ARG_SRC_ITER_C, wrap(u.src_iter_c, engine_, zeros.data())},
      {DNNL_ARG_DIFF_SRC_ITER, wrap(u.src_iter, engine_, diff_state.data())},
      {DNNL_ARG_DIFF_SRC_ITER_C, wrap(u.src_iter_c, engine_, diff_state.data())},
      {DNNL_ARG_WEIGHTS_LAYER,
       as_wanted(engine_, stream_, pd.weights_layer_desc(), u.weights_layer, weights.input)},
      {DNNL_ARG_WEIGHTS_ITER,
       as_wanted(engine_, stream_, pd.weights_iter_desc(), u.weights_iter, weights.recurrent)},
      {DNNL_ARG_BIAS, wrap(u.bias, engine_, weights.bias)},
      {DNNL_ARG_DST_LAYER, wrap(u.dst, engine_, dst)},
      {DNNL_ARG_DIFF_DST_LAYER, wrap(u.dst, engine_, diff_dst.data())},
      {DNNL_ARG_WORKSPACE, wrap(pd.workspace_desc(), engine_, workspace)},
      {DNNL_ARG_DIFF_SRC_LAYER, wrap(u.src, engine_, diff_src.data())},
      {DNNL_ARG_DIFF_WEIGHTS_LAYER, diff_layer},
      {DNNL_ARG_DIFF_WEIGHTS_ITER, diff_iter},
      {DNNL_ARG_DIFF_BIAS, diff_bias}};
  memory diff_projection;
  if (s.projection > 0) {
    arguments.emplace(DNNL_ARG_WEIGHTS_PROJECTION,
                      as_wanted(engine_, stream_, pd.weights_projection_desc(), u.projection,
                                weights.projection));
    diff_projection = zeroed(engine_, pd.diff_weights_projection_desc());
    arguments.emplace(DNNL_ARG_DIFF_WEIGHTS_PROJECTION, diff_projection);
  }
  dnnl::lstm_backward(pd).execute(stream_, arguments);
  store(engine_, stream_, diff_layer, u.weights_layer, gradients.input);
  store(engine_, stream_, diff_iter, u.weights_iter, gradients.recurrent);
  store(engine_, stream_, diff_bias, u.bias, gradients.bias);
  if (s.projection > 0)
    store(engine_, stream_, diff_projection, u.projection, gradients.projection);
  stream_.wait();
  if (dx != nullptr) from_time_major(s.batch, s.input, s.steps, diff_src.data(), dx);
}

}  // namespace tessera::kernels
