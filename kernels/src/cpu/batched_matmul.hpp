#pragma once
// Products of matrix batches as one oneDNN matmul: c[b] = a[b] * b[b] + beta * c[b], an operand
// shared by every batch entry where it has no batch, a transposed operand read through strides
// (nothing is copied). The sequence kernels' per-sample products (N x C x T tensors) are these.
#include <cstdint>

#include <oneapi/dnnl/dnnl.hpp>

namespace tessera::kernels {

struct MatrixBatch {
  const float* data = nullptr;
  bool batched = true;      // one matrix per batch entry; else one for all
  bool transposed = false;  // stored as the transpose of the logical rows x columns matrix
};

// c: batch x m x n (row-major, contiguous); a: m x k, b: k x n (logical); beta 0 or 1.
void batched_matmul(const dnnl::engine& engine, dnnl::stream& stream, std::int64_t batch,
                    std::int64_t m, std::int64_t n, std::int64_t k, MatrixBatch a, MatrixBatch b,
                    float* c, float beta);

}  // namespace tessera::kernels
