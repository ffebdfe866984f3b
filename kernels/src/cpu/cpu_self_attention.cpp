// Multi-head self-attention on the CPU, unfused: the projections are the sequence kernels'
// per-step projections, each head's score and weighted-sum products oneDNN matmuls over the
// sample's heads, the softmax (causal mask included) a plain loop. The workspace keeps
// Q, K, V (N x 3C' x T), the probabilities (N x heads x T x T) and the heads' outputs
// (N x C' x T) for backward, and room for backward's intermediate gradients; C' is C but for a
// tensor group's share of the heads.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "argument_check.hpp"
#include "cpu/batched_matmul.hpp"
#include "cpu/cpu_sequence_kernels.hpp"

namespace tessera::kernels {
namespace {

struct SelfAttentionWorkspace {
  float* qkv;            // N x 3C x T
  float* probabilities;  // N x heads x T x T, row i the query step's weights over key steps
  float* heads_output;   // N x C x T
  // Backward's: the gradients of the heads' outputs (N x C x T), of Q, K, V (N x 3C x T) and of
  // one sample's scores (heads x T x T).
  float* d_heads;
  float* d_qkv;
  float* d_scores;
};

SelfAttentionWorkspace split(const SelfAttentionShape& s, float* base) {
  const std::int64_t activations = s.batch * s.inner() * s.steps;
  const std::int64_t probabilities = s.batch * s.heads * s.steps * s.steps;
  SelfAttentionWorkspace w{};
  w.qkv = base;
  w.probabilities = w.qkv + 3 * activations;
  w.heads_output = w.probabilities + probabilities;
  w.d_heads = w.heads_output + activations;
  w.d_qkv = w.d_heads + activations;
  w.d_scores = w.d_qkv + 3 * activations;
  return w;
}

void require_shape(const SelfAttentionShape& s, const char* kernel) {
  require_argument(s.batch >= 0 && s.channels >= 1 && s.steps >= 1 && s.heads >= 1 &&
                       s.inner() <= s.channels && s.inner() % s.heads == 0,
                   kernel,
                   "need batch >= 0, steps >= 1 and heads dividing the attention channels, got "
                   "channels " +
                       std::to_string(s.channels) + ", attention channels " +
                       std::to_string(s.inner()) + ", heads " + std::to_string(s.heads));
}

// Rows of `scores` (steps x steps) to their softmax, in place; a causal row i sees steps <= i.
void softmax_rows(std::int64_t steps, bool causal, float* scores) {
  for (std::int64_t i = 0; i < steps; ++i) {
    float* row = scores + i * steps;
    const std::int64_t seen = causal ? i + 1 : steps;
    const float largest = *std::max_element(row, row + seen);
    double sum = 0;
    for (std::int64_t j = 0; j < seen; ++j) {
      row[j] = std::exp(row[j] - largest);
      sum += row[j];
    }
    const auto inverse = static_cast<float>(1.0 / sum);
    for (std::int64_t j = 0; j < seen; ++j) row[j] *= inverse;
    std::fill(row + seen, row + steps, 0.0F);
  }
}

}  // namespace

std::int64_t CpuSequenceKernels::self_attention_workspace_floats(const SelfAttentionShape& s) {
  return s.batch * (8 * s.inner() * s.steps + s.heads * s.steps * s.steps) +
         s.heads * s.steps * s.steps;
}

void CpuSequenceKernels::self_attention_forward(const SelfAttentionShape& s, const float* x,
                                                const SelfAttentionWeights& weights, float* y,
                                                float* workspace) {
  require_shape(s, "self_attention_forward");
  const SelfAttentionWorkspace w = split(s, workspace);
  const std::int64_t c = s.channels, a = s.inner(), t = s.steps, d = a / s.heads;
  const auto scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  projection_forward(s.batch, c, 3 * a, t, x, weights.qkv, weights.qkv_bias, w.qkv);
  for (std::int64_t n = 0; n < s.batch; ++n) {
    const float* q = w.qkv + n * 3 * a * t;
    const float* k = q + a * t;
    const float* v = k + a * t;
    float* p = w.probabilities + n * s.heads * t * t;
    // Scores of every head: S_h (T x T) = Q_h^T K_h, Q_h and K_h d x T.
    batched_matmul(engine_, stream_, s.heads, t, t, d, {.data = q, .transposed = true}, {.data = k},
                   p, 0.0F);
    for (std::int64_t i = 0; i < s.heads * t * t; ++i) p[i] *= scale;
    for (std::int64_t h = 0; h < s.heads; ++h) softmax_rows(t, s.causal, p + h * t * t);
    // O_h (d x T) = V_h P_h^T.
    batched_matmul(engine_, stream_, s.heads, d, t, t, {.data = v}, {.data = p, .transposed = true},
                   w.heads_output + n * a * t, 0.0F);
  }
  projection_forward(s.batch, a, c, t, w.heads_output, weights.output, weights.output_bias, y);
}

void CpuSequenceKernels::self_attention_backward(const SelfAttentionShape& s, const float* x,
                                                 const SelfAttentionWeights& weights,
                                                 float* workspace, const float* dy, float* dx,
                                                 const SelfAttentionGradients& gradients) {
  require_shape(s, "self_attention_backward");
  const SelfAttentionWorkspace w = split(s, workspace);
  const std::int64_t c = s.channels, a = s.inner(), t = s.steps, d = a / s.heads;
  const auto scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
  projection_backward_weights(s.batch, a, c, t, w.heads_output, dy, gradients.output,
                              gradients.output_bias, 0.0F);
  projection_backward_data(s.batch, a, c, t, dy, weights.output, w.d_heads);
  for (std::int64_t n = 0; n < s.batch; ++n) {
    const float* q = w.qkv + n * 3 * a * t;
    const float* k = q + a * t;
    const float* v = k + a * t;
    const float* p = w.probabilities + n * s.heads * t * t;
    const float* d_o = w.d_heads + n * a * t;
    float* dq = w.d_qkv + n * 3 * a * t;
    float* dk = dq + a * t;
    float* dv = dk + a * t;
    // dV_h (d x T) = dO_h P_h; dP_h (T x T) = dO_h^T V_h.
    batched_matmul(engine_, stream_, s.heads, d, t, t, {.data = d_o}, {.data = p}, dv, 0.0F);
    batched_matmul(engine_, stream_, s.heads, t, t, d, {.data = d_o, .transposed = true},
                   {.data = v}, w.d_scores, 0.0F);
    // Through the softmax: dS = P (dP - rowsum(dP P)), then the 1/sqrt(d) scaling.
    for (std::int64_t row = 0; row < s.heads * t; ++row) {
      const float* pr = p + row * t;
      float* dr = w.d_scores + row * t;
      double dot = 0;
      for (std::int64_t j = 0; j < t; ++j) dot += static_cast<double>(dr[j]) * pr[j];
      for (std::int64_t j = 0; j < t; ++j) {
        dr[j] = static_cast<float>(pr[j] * (dr[j] - dot)) * scale;
      }
    }
    // dQ_h (d x T) = K_h dS_h^T; dK_h = Q_h dS_h.
    batched_matmul(engine_, stream_, s.heads, d, t, t, {.data = k},
                   {.data = w.d_scores, .transposed = true}, dq, 0.0F);
    batched_matmul(engine_, stream_, s.heads, d, t, t, {.data = q}, {.data = w.d_scores}, dk, 0.0F);
  }
  projection_backward_weights(s.batch, c, 3 * a, t, x, w.d_qkv, gradients.qkv, gradients.qkv_bias,
                              0.0F);
  if (dx != nullptr) projection_backward_data(s.batch, c, 3 * a, t, w.d_qkv, weights.qkv, dx);
}

}  // namespace tessera::kernels
