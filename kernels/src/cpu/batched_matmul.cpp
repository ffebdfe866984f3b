#include "cpu/batched_matmul.hpp"

#include <unordered_map>

#include "cpu/dnnl_plain_memory.hpp"

namespace tessera::kernels {
namespace {

using dnnl::memory;

memory::desc operand_desc(std::int64_t batch, std::int64_t rows, std::int64_t columns,
                          const MatrixBatch& operand) {
  const std::int64_t entries = operand.batched ? batch : 1;
  return operand.transposed ? strided_desc({entries, rows, columns}, {rows * columns, 1, rows})
                            : strided_desc({entries, rows, columns}, {rows * columns, columns, 1});
}

}  // namespace

void batched_matmul(const dnnl::engine& engine, dnnl::stream& stream, std::int64_t batch,
                    std::int64_t m, std::int64_t n, std::int64_t k, MatrixBatch a, MatrixBatch b,
                    float* c, float beta) {
  const memory::desc a_desc = operand_desc(batch, m, k, a);
  const memory::desc b_desc = operand_desc(batch, k, n, b);
  const memory::desc c_desc = plain_desc({batch, m, n});
  dnnl::primitive_attr attributes;
  if (beta != 0.0F) {
    dnnl::post_ops accumulate;
    accumulate.append_sum(beta);
    attributes.set_post_ops(accumulate);
  }
  const dnnl::matmul::primitive_desc matmul_pd({a_desc, b_desc, c_desc}, attributes, engine);
  dnnl::matmul(matmul_pd).execute(stream, {{DNNL_ARG_SRC, wrap(a_desc, engine, a.data)},
                                           {DNNL_ARG_WEIGHTS, wrap(b_desc, engine, b.data)},
                                           {DNNL_ARG_DST, wrap(c_desc, engine, c)}});
  stream.wait();
}

}  // namespace tessera::kernels
