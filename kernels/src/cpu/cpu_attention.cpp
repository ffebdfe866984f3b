// Normalised Bahdanau attention (layer.hpp's AttentionParams; MLPerf GNMT's attention.py):
//   Q = Wq query, K = Wk memory (per step), v' = g v / |v| (normalised; v itself otherwise),
//   score[t, s] = v' . tanh(Q_t + K_s + b), A = softmax over s, context_t = sum_s A[t, s] memory_s.
// The projections and the two products with the memory are oneDNN matmuls per sample; the
// scores, their softmax and the reductions of their gradients are loops (oneDNN has no fused
// additive score). The workspace keeps Q, K, the tanh of every (t, s) pair and A.
#include <cmath>
#include <vector>

#include "argument_check.hpp"
#include "cpu/batched_matmul.hpp"
#include "cpu/cpu_sequence_kernels.hpp"

namespace tessera::kernels {
namespace {

struct Workspace {
  float* q;  // N x Tq x U
  float* k;  // N x Tm x U
  float* h;  // N x Tq x Tm x U: tanh(Q_t + K_s + b)
  float* a;  // N x Tq x Tm: the attention weights
};

Workspace split(const AttentionShape& s, float* base) {
  Workspace w{};
  w.q = base;
  w.k = w.q + s.batch * s.query_steps * s.units;
  w.h = w.k + s.batch * s.memory_steps * s.units;
  w.a = w.h + s.batch * s.query_steps * s.memory_steps * s.units;
  return w;
}

// The score vector as applied: g v / |v| when normalised.
std::vector<double> applied_score(const AttentionShape& s, const AttentionWeights& weights,
                                  double* norm) {
  std::vector<double> v(static_cast<std::size_t>(s.units));
  double squares = 0;
  for (std::int64_t u = 0; u < s.units; ++u) squares += double(weights.score[u]) * weights.score[u];
  *norm = std::sqrt(squares);
  const double scale = s.normalize ? double(*weights.gain) / std::max(*norm, 1e-30) : 1.0;
  for (std::int64_t u = 0; u < s.units; ++u)
    v[static_cast<std::size_t>(u)] = scale * weights.score[u];
  return v;
}

void require_shape(const AttentionShape& s, const char* kernel) {
  require_argument(s.batch >= 1 && s.query_channels >= 1 && s.query_steps >= 1 &&
                       s.memory_channels >= 1 && s.memory_steps >= 1 && s.units >= 1,
                   kernel, "every extent must be >= 1");
}

}  // namespace

std::int64_t CpuSequenceKernels::attention_workspace_floats(const AttentionShape& s) {
  require_shape(s, "attention_workspace_floats");
  return s.batch * (s.query_steps * s.units + s.memory_steps * s.units +
                    s.query_steps * s.memory_steps * (s.units + 1));
}

void CpuSequenceKernels::attention_forward(const AttentionShape& s, const float* query,
                                           const float* memory, const AttentionWeights& weights,
                                           float* context, float* workspace) {
  require_shape(s, "attention_forward");
  const auto w = split(s, workspace);
  const std::int64_t tq = s.query_steps, tm = s.memory_steps, units = s.units;
  // Q_n (Tq x U) = query_n^T (Tq x Cq) Wq^T (Cq x U); K_n likewise from the memory.
  batched_matmul(engine_, stream_, s.batch, tq, units, s.query_channels,
                 {.data = query, .transposed = true},
                 {.data = weights.query, .batched = false, .transposed = true}, w.q, 0.0F);
  batched_matmul(engine_, stream_, s.batch, tm, units, s.memory_channels,
                 {.data = memory, .transposed = true},
                 {.data = weights.key, .batched = false, .transposed = true}, w.k, 0.0F);
  double norm = 0;
  const auto v = applied_score(s, weights, &norm);
  std::vector<double> scores(static_cast<std::size_t>(tm));
  for (std::int64_t n = 0; n < s.batch; ++n) {
    for (std::int64_t t = 0; t < tq; ++t) {
      const float* q = w.q + (n * tq + t) * units;
      double largest = -INFINITY;
      for (std::int64_t m = 0; m < tm; ++m) {
        const float* k = w.k + (n * tm + m) * units;
        float* h = w.h + ((n * tq + t) * tm + m) * units;
        double score = 0;
        for (std::int64_t u = 0; u < units; ++u) {
          const double bias = s.normalize ? weights.bias[u] : 0.0;
          h[u] = static_cast<float>(std::tanh(double(q[u]) + k[u] + bias));
          score += v[static_cast<std::size_t>(u)] * h[u];
        }
        scores[static_cast<std::size_t>(m)] = score;
        largest = std::max(largest, score);
      }
      double total = 0;
      for (auto& score : scores) total += (score = std::exp(score - largest));
      float* a = w.a + (n * tq + t) * tm;
      for (std::int64_t m = 0; m < tm; ++m)
        a[m] = static_cast<float>(scores[static_cast<std::size_t>(m)] / total);
    }
  }
  // context_n (Cm x Tq) = memory_n (Cm x Tm) A_n^T (Tm x Tq).
  batched_matmul(engine_, stream_, s.batch, s.memory_channels, tq, tm, {.data = memory},
                 {.data = w.a, .transposed = true}, context, 0.0F);
}

void CpuSequenceKernels::attention_backward(const AttentionShape& s, const float* query,
                                            const float* memory, const AttentionWeights& weights,
                                            const float* workspace, const float* dcontext,
                                            float* dquery, float* dmemory,
                                            const AttentionGradients& gradients) {
  require_shape(s, "attention_backward");
  const auto w = split(s, const_cast<float*>(workspace));
  const std::int64_t tq = s.query_steps, tm = s.memory_steps, units = s.units;
  const std::int64_t cq = s.query_channels, cm = s.memory_channels;
  // dA_n (Tq x Tm) = dcontext_n^T (Tq x Cm) memory_n (Cm x Tm).
  std::vector<float> da(static_cast<std::size_t>(s.batch * tq * tm));
  batched_matmul(engine_, stream_, s.batch, tq, tm, cm, {.data = dcontext, .transposed = true},
                 {.data = memory}, da.data(), 0.0F);
  if (dmemory != nullptr) {
    // The weighted sum's part: dmemory_n (Cm x Tm) = dcontext_n (Cm x Tq) A_n (Tq x Tm).
    batched_matmul(engine_, stream_, s.batch, cm, tm, tq, {.data = dcontext}, {.data = w.a},
                   dmemory, 0.0F);
  }
  double norm = 0;
  const auto v = applied_score(s, weights, &norm);
  std::vector<double> dv(static_cast<std::size_t>(units), 0.0), dbias(dv.size(), 0.0);
  std::vector<float> dq(static_cast<std::size_t>(s.batch * tq * units), 0.0F);
  std::vector<float> dk(static_cast<std::size_t>(s.batch * tm * units), 0.0F);
  for (std::int64_t n = 0; n < s.batch; ++n) {
    for (std::int64_t t = 0; t < tq; ++t) {
      const float* a = w.a + (n * tq + t) * tm;
      const float* d = da.data() + (n * tq + t) * tm;
      double mean = 0;  // the softmax's backward: dscore = A (dA - sum A dA)
      for (std::int64_t m = 0; m < tm; ++m) mean += double(a[m]) * d[m];
      for (std::int64_t m = 0; m < tm; ++m) {
        const double dscore = a[m] * (d[m] - mean);
        const float* h = w.h + ((n * tq + t) * tm + m) * units;
        float* dq_row = dq.data() + (n * tq + t) * units;
        float* dk_row = dk.data() + (n * tm + m) * units;
        for (std::int64_t u = 0; u < units; ++u) {
          const auto i = static_cast<std::size_t>(u);
          dv[i] += dscore * h[u];
          const double dpre = dscore * v[i] * (1.0 - double(h[u]) * h[u]);
          dq_row[u] += static_cast<float>(dpre);
          dk_row[u] += static_cast<float>(dpre);
          dbias[i] += dpre;
        }
      }
    }
  }
  // Through the normalisation v' = g v / |v|.
  if (s.normalize) {
    double along = 0;  // v . dv'
    for (std::int64_t u = 0; u < units; ++u) along += double(weights.score[u]) * dv[std::size_t(u)];
    const double g = *weights.gain;
    const double safe = std::max(norm, 1e-30);
    for (std::int64_t u = 0; u < units; ++u) {
      gradients.score[u] = static_cast<float>(
          g / safe * (dv[std::size_t(u)] - along * weights.score[u] / (safe * safe)));
      gradients.bias[u] = static_cast<float>(dbias[std::size_t(u)]);
    }
    *gradients.gain = static_cast<float>(along / safe);
  } else {
    for (std::int64_t u = 0; u < units; ++u)
      gradients.score[u] = static_cast<float>(dv[std::size_t(u)]);
  }
  // dWq (U x Cq) = sum over n of dQ_n^T (U x Tq) query_n^T (Tq x Cq); dWk likewise.
  for (std::int64_t n = 0; n < s.batch; ++n) {
    const float beta = n == 0 ? 0.0F : 1.0F;
    batched_matmul(engine_, stream_, 1, units, cq, tq,
                   {.data = dq.data() + n * tq * units, .transposed = true},
                   {.data = query + n * cq * tq, .transposed = true}, gradients.query, beta);
    batched_matmul(engine_, stream_, 1, units, cm, tm,
                   {.data = dk.data() + n * tm * units, .transposed = true},
                   {.data = memory + n * cm * tm, .transposed = true}, gradients.key, beta);
  }
  // dquery_n (Cq x Tq) = Wq^T (Cq x U) dQ_n^T (U x Tq); the keys' part adds into dmemory.
  if (dquery != nullptr) {
    batched_matmul(engine_, stream_, s.batch, cq, tq, units,
                   {.data = weights.query, .batched = false, .transposed = true},
                   {.data = dq.data(), .transposed = true}, dquery, 0.0F);
  }
  if (dmemory != nullptr) {
    batched_matmul(engine_, stream_, s.batch, cm, tm, units,
                   {.data = weights.key, .batched = false, .transposed = true},
                   {.data = dk.data(), .transposed = true}, dmemory, 1.0F);
  }
}

}  // namespace tessera::kernels
