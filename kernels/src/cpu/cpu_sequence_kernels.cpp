// The engine and stream the CPU sequence kernels share, and the per-step linear kernels: the
// embedding (a gather of table rows and the scatter-add of their gradients, loops: oneDNN has no
// gather), the projection (per-sample matmuls W X_n with X_n = C x T) and its gathered form.
#include "cpu/cpu_sequence_kernels.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "argument_check.hpp"
#include "cpu/batched_matmul.hpp"

namespace tessera::kernels {
namespace {

std::int64_t token_at(const float* tokens, std::int64_t index, std::int64_t vocabulary,
                      const char* kernel) {
  const float value = tokens[index];
  const auto token = static_cast<std::int64_t>(std::lround(value));
  require_argument(
      token >= 0 && token < vocabulary && std::abs(value - static_cast<float>(token)) < 1e-3F,
      kernel,
      "token ids must be whole numbers in [0, " + std::to_string(vocabulary) + "), got " +
          std::to_string(value));
  return token;
}

// db[o] = beta db[o] + the sum of dy[n, o, t] over samples and steps (beta 0 or 1).
void sum_bias_gradient(std::int64_t batch, std::int64_t out, std::int64_t steps, const float* dy,
                       float* db, float beta) {
  for (std::int64_t o = 0; o < out; ++o) {
    double sum = 0;
    for (std::int64_t n = 0; n < batch; ++n)
      for (std::int64_t t = 0; t < steps; ++t) sum += dy[(n * out + o) * steps + t];
    db[o] = static_cast<float>(sum + (beta == 0.0F ? 0.0 : static_cast<double>(beta) * db[o]));
  }
}

}  // namespace

CpuSequenceKernels::CpuSequenceKernels() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {}

void CpuSequenceKernels::embedding_forward(std::int64_t batch, std::int64_t channels,
                                           std::int64_t steps, std::int64_t channel,
                                           const TableRows& rows, std::int64_t dimension,
                                           const float* tokens, const float* table, float* y) {
  for (std::int64_t n = 0; n < batch; ++n) {
    for (std::int64_t t = 0; t < steps; ++t) {
      const std::int64_t row = token_at(tokens, (n * channels + channel) * steps + t,
                                        rows.vocabulary, "embedding_forward") -
                               rows.first;
      const bool held = row >= 0 && row < rows.count;
      for (std::int64_t d = 0; d < dimension; ++d) {
        y[(n * dimension + d) * steps + t] = held ? table[row * dimension + d] : 0.0F;
      }
    }
  }
}

void CpuSequenceKernels::embedding_backward(std::int64_t batch, std::int64_t channels,
                                            std::int64_t steps, std::int64_t channel,
                                            const TableRows& rows, std::int64_t dimension,
                                            const float* tokens, const float* dy, float* dtable,
                                            float beta) {
  if (beta == 0.0F) {
    std::fill(dtable, dtable + rows.count * dimension, 0.0F);
  }
  for (std::int64_t n = 0; n < batch; ++n) {
    for (std::int64_t t = 0; t < steps; ++t) {
      const std::int64_t row = token_at(tokens, (n * channels + channel) * steps + t,
                                        rows.vocabulary, "embedding_backward") -
                               rows.first;
      if (row < 0 || row >= rows.count) continue;
      float* values = dtable + row * dimension;
      for (std::int64_t d = 0; d < dimension; ++d) {
        values[d] += dy[(n * dimension + d) * steps + t];
      }
    }
  }
}

void CpuSequenceKernels::position_embedding_forward(std::int64_t batch, std::int64_t dimension,
                                                    std::int64_t steps, const float* table,
                                                    const float* x, float* y) {
  require_argument(batch >= 0 && dimension >= 1 && steps >= 1, "position_embedding_forward",
                   "need batch >= 0, dimension >= 1, steps >= 1");
  for (std::int64_t n = 0; n < batch; ++n) {
    for (std::int64_t d = 0; d < dimension; ++d) {
      const std::int64_t row = (n * dimension + d) * steps;
      for (std::int64_t t = 0; t < steps; ++t) y[row + t] = x[row + t] + table[t * dimension + d];
    }
  }
}

void CpuSequenceKernels::position_embedding_backward(std::int64_t batch, std::int64_t dimension,
                                                     std::int64_t steps, std::int64_t positions,
                                                     const float* dy, float* dtable, float beta) {
  require_argument(batch >= 0 && dimension >= 1 && steps >= 1 && steps <= positions,
                   "position_embedding_backward",
                   "need batch >= 0, dimension >= 1 and 1 <= steps <= positions");
  if (beta == 0.0F) std::fill(dtable, dtable + positions * dimension, 0.0F);
  for (std::int64_t n = 0; n < batch; ++n) {
    for (std::int64_t d = 0; d < dimension; ++d) {
      const float* row = dy + (n * dimension + d) * steps;
      for (std::int64_t t = 0; t < steps; ++t) dtable[t * dimension + d] += row[t];
    }
  }
}

void CpuSequenceKernels::projection_forward(std::int64_t batch, std::int64_t in, std::int64_t out,
                                            std::int64_t steps, const float* x, const float* w,
                                            const float* b, float* y) {
  // Y_n (out x T) = W (out x in) X_n (in x T), W shared by the samples.
  batched_matmul(engine_, stream_, batch, out, steps, in, {.data = w, .batched = false},
                 {.data = x}, y, 0.0F);
  if (b == nullptr) return;
  for (std::int64_t n = 0; n < batch; ++n)
    for (std::int64_t o = 0; o < out; ++o)
      for (std::int64_t t = 0; t < steps; ++t) y[(n * out + o) * steps + t] += b[o];
}

void CpuSequenceKernels::projection_backward_data(std::int64_t batch, std::int64_t in,
                                                  std::int64_t out, std::int64_t steps,
                                                  const float* dy, const float* w, float* dx) {
  // dX_n (in x T) = W^T (in x out) dY_n (out x T).
  batched_matmul(engine_, stream_, batch, in, steps, out,
                 {.data = w, .batched = false, .transposed = true}, {.data = dy}, dx, 0.0F);
}

void CpuSequenceKernels::projection_backward_weights(std::int64_t batch, std::int64_t in,
                                                     std::int64_t out, std::int64_t steps,
                                                     const float* x, const float* dy, float* dw,
                                                     float* db, float beta) {
  // dW (out x in) = sum over n of dY_n (out x T) X_n^T (T x in): one product per sample, added.
  for (std::int64_t n = 0; n < batch; ++n) {
    batched_matmul(engine_, stream_, 1, out, in, steps, {.data = dy + n * out * steps},
                   {.data = x + n * in * steps, .transposed = true}, dw, n == 0 ? beta : 1.0F);
  }
  if (db == nullptr) return;
  sum_bias_gradient(batch, out, steps, dy, db, beta);
}

void CpuSequenceKernels::projection_backward_bias(std::int64_t batch, std::int64_t out,
                                                  std::int64_t steps, const float* dy, float* db) {
  sum_bias_gradient(batch, out, steps, dy, db, 0.0F);
}

// The gathered projections loop over positions: each scores a handful of rows (the target and
// the sampled classes), too few and too scattered for a matrix product.
void CpuSequenceKernels::gathered_projection_forward(std::int64_t batch, std::int64_t in,
                                                     std::int64_t rows, std::int64_t steps,
                                                     const float* x, const float* w, const float* b,
                                                     const std::vector<std::int32_t>& ids,
                                                     const std::vector<float>& offsets, float* y) {
  for (std::int64_t n = 0; n < batch; ++n) {
    for (std::int64_t k = 0; k < rows; ++k) {
      for (std::int64_t t = 0; t < steps; ++t) {
        const auto at = static_cast<std::size_t>((n * rows + k) * steps + t);
        const float* row = w + static_cast<std::int64_t>(ids[at]) * in;
        float score = b != nullptr ? b[ids[at]] : 0.0F;
        for (std::int64_t i = 0; i < in; ++i) score += row[i] * x[(n * in + i) * steps + t];
        y[at] = score - offsets[at];
      }
    }
  }
}

void CpuSequenceKernels::gathered_projection_backward_data(std::int64_t batch, std::int64_t in,
                                                           std::int64_t rows, std::int64_t steps,
                                                           const float* dy, const float* w,
                                                           const std::vector<std::int32_t>& ids,
                                                           float* dx) {
  std::fill(dx, dx + batch * in * steps, 0.0F);
  for (std::int64_t n = 0; n < batch; ++n) {
    for (std::int64_t k = 0; k < rows; ++k) {
      for (std::int64_t t = 0; t < steps; ++t) {
        const auto at = static_cast<std::size_t>((n * rows + k) * steps + t);
        const float* row = w + static_cast<std::int64_t>(ids[at]) * in;
        for (std::int64_t i = 0; i < in; ++i) dx[(n * in + i) * steps + t] += dy[at] * row[i];
      }
    }
  }
}

void CpuSequenceKernels::gathered_projection_backward_weights(
    std::int64_t batch, std::int64_t in, std::int64_t out, std::int64_t rows, std::int64_t steps,
    const float* x, const float* dy, const std::vector<std::int32_t>& ids, float* dw, float* db) {
  std::fill(dw, dw + out * in, 0.0F);
  if (db != nullptr) std::fill(db, db + out, 0.0F);
  for (std::int64_t n = 0; n < batch; ++n) {
    for (std::int64_t k = 0; k < rows; ++k) {
      for (std::int64_t t = 0; t < steps; ++t) {
        const auto at = static_cast<std::size_t>((n * rows + k) * steps + t);
        float* row = dw + static_cast<std::int64_t>(ids[at]) * in;
        for (std::int64_t i = 0; i < in; ++i) row[i] += dy[at] * x[(n * in + i) * steps + t];
        if (db != nullptr) db[ids[at]] += dy[at];
      }
    }
  }
}

}  // namespace tessera::kernels
