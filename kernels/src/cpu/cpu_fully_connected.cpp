// Fully connected layers as oneDNN matmuls: the three directions are the same product with
// different operands transposed (expressed as strides, nothing is copied), and the weight
// gradient accumulates through a sum post-op when beta is 1.
#include <string>
#include <unordered_map>

#include "argument_check.hpp"
#include "cpu/cpu_layer_kernels.hpp"
#include "cpu/dnnl_plain_memory.hpp"

namespace tessera::kernels {
namespace {

using dnnl::memory;

struct MatrixOperand {
  const float* data;
  bool transposed;  // stored as the transpose of the logical rows x columns matrix
};

memory::desc matrix_desc(std::int64_t rows, std::int64_t columns, bool transposed) {
  return transposed ? strided_desc({rows, columns}, {1, rows})
                    : strided_desc({rows, columns}, {columns, 1});
}

// c[m x n] = a[m x k] * b[k x n] (+ bias[n]) + beta * c
void matmul(const dnnl::engine& engine, dnnl::stream& stream, std::int64_t m, std::int64_t n,
            std::int64_t k, MatrixOperand a, MatrixOperand b, const float* bias, float* c,
            float beta) {
  const memory::desc a_desc = matrix_desc(m, k, a.transposed);
  const memory::desc b_desc = matrix_desc(k, n, b.transposed);
  const memory::desc c_desc = plain_desc({m, n});
  dnnl::primitive_attr attributes;
  if (beta != 0.0f) {
    dnnl::post_ops accumulate;
    accumulate.append_sum(beta);
    attributes.set_post_ops(accumulate);
  }
  std::unordered_map<int, memory> arguments{{DNNL_ARG_SRC, wrap(a_desc, engine, a.data)},
                                            {DNNL_ARG_WEIGHTS, wrap(b_desc, engine, b.data)},
                                            {DNNL_ARG_DST, wrap(c_desc, engine, c)}};
  dnnl::matmul::primitive_desc matmul_pd;
  if (bias != nullptr) {
    const memory::desc bias_desc = plain_desc({1, n});
    matmul_pd = {{a_desc, b_desc, bias_desc, c_desc}, attributes, engine};
    arguments.emplace(DNNL_ARG_BIAS, wrap(bias_desc, engine, bias));
  } else {
    matmul_pd = {{a_desc, b_desc, c_desc}, attributes, engine};
  }
  dnnl::matmul(matmul_pd).execute(stream, arguments);
  stream.wait();
}

void require_sizes(std::int64_t batch, std::int64_t in, std::int64_t out, const char* kernel) {
  require_argument(batch >= 1 && in >= 1 && out >= 1, kernel,
                   "batch, in and out must be >= 1, got " + std::to_string(batch) + ", " +
                       std::to_string(in) + ", " + std::to_string(out));
}

}  // namespace

void CpuLayerKernels::fully_connected_forward(std::int64_t batch, std::int64_t in, std::int64_t out,
                                              const float* x, const float* w, const float* b,
                                              float* y) {
  require_sizes(batch, in, out, "fully_connected_forward");
  // y = x * w^T: w (out x in, row-major) is w^T (in x out) transposed.
  matmul(engine_, stream_, batch, out, in, {x, false}, {w, true}, b, y, 0.0f);
}

void CpuLayerKernels::fully_connected_backward_data(std::int64_t batch, std::int64_t in,
                                                    std::int64_t out, const float* dy,
                                                    const float* w, float* dx) {
  require_sizes(batch, in, out, "fully_connected_backward_data");
  matmul(engine_, stream_, batch, in, out, {dy, false}, {w, false}, nullptr, dx, 0.0f);
}

void CpuLayerKernels::fully_connected_backward_weights(std::int64_t batch, std::int64_t in,
                                                       std::int64_t out, const float* x,
                                                       const float* dy, float* dw, float* db,
                                                       float beta) {
  require_sizes(batch, in, out, "fully_connected_backward_weights");
  require_argument(beta == 0.0f || beta == 1.0f, "fully_connected_backward_weights",
                   "beta must be 0 or 1, got " + std::to_string(beta));
  // dw = dy^T * x: dy (batch x out) is dy^T (out x batch) transposed.
  matmul(engine_, stream_, out, in, batch, {dy, true}, {x, false}, nullptr, dw, beta);
  if (db != nullptr) bias_backward(batch, out, 1, dy, db, beta);
}

}  // namespace tessera::kernels
