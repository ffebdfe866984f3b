#pragma once
// SequenceKernels on the host CPU: oneDNN's LSTM primitives (with their projection, LSTMP) and
// matmuls for the projection and attention's products; plain loops where oneDNN has nothing
// (the embedding's lookup and scatter-add, attention's scores and softmax). Pointers are host
// memory. Each kernel has a file beside this one.
#include <oneapi/dnnl/dnnl.hpp>

#include "tessera/kernels/sequence_kernels.hpp"

namespace tessera::kernels {

class CpuSequenceKernels final : public SequenceKernels {
 public:
  CpuSequenceKernels();

  std::int64_t lstm_workspace_floats(const LstmShape& shape) override;
  void lstm_forward(const LstmShape& shape, const float* x, const LstmWeights& weights, float* y,
                    float* workspace) override;
  void lstm_backward(const LstmShape& shape, const LstmWeights& weights, const float* workspace,
                     const float* dy, float* dx, const LstmGradients& gradients) override;

  void embedding_forward(std::int64_t batch, std::int64_t channels, std::int64_t steps,
                         std::int64_t channel, const TableRows& rows, std::int64_t dimension,
                         const float* tokens, const float* table, float* y) override;
  void embedding_backward(std::int64_t batch, std::int64_t channels, std::int64_t steps,
                          std::int64_t channel, const TableRows& rows, std::int64_t dimension,
                          const float* tokens, const float* dy, float* dtable, float beta) override;

  std::int64_t self_attention_workspace_floats(const SelfAttentionShape& shape) override;
  void self_attention_forward(const SelfAttentionShape& shape, const float* x,
                              const SelfAttentionWeights& weights, float* y,
                              float* workspace) override;
  void self_attention_backward(const SelfAttentionShape& shape, const float* x,
                               const SelfAttentionWeights& weights, float* workspace,
                               const float* dy, float* dx,
                               const SelfAttentionGradients& gradients) override;
  void position_embedding_forward(std::int64_t batch, std::int64_t dimension, std::int64_t steps,
                                  const float* table, const float* x, float* y) override;
  void position_embedding_backward(std::int64_t batch, std::int64_t dimension, std::int64_t steps,
                                   std::int64_t positions, const float* dy, float* dtable,
                                   float beta) override;
  void projection_forward(std::int64_t batch, std::int64_t in, std::int64_t out, std::int64_t steps,
                          const float* x, const float* w, const float* b, float* y) override;
  void projection_backward_data(std::int64_t batch, std::int64_t in, std::int64_t out,
                                std::int64_t steps, const float* dy, const float* w,
                                float* dx) override;
  void projection_backward_weights(std::int64_t batch, std::int64_t in, std::int64_t out,
                                   std::int64_t steps, const float* x, const float* dy, float* dw,
                                   float* db, float beta) override;
  void projection_backward_bias(std::int64_t batch, std::int64_t out, std::int64_t steps,
                                const float* dy, float* db) override;

  void gathered_projection_forward(std::int64_t batch, std::int64_t in, std::int64_t rows,
                                   std::int64_t steps, const float* x, const float* w,
                                   const float* b, const std::vector<std::int32_t>& ids,
                                   const std::vector<float>& offsets, float* y) override;
  void gathered_projection_backward_data(std::int64_t batch, std::int64_t in, std::int64_t rows,
                                         std::int64_t steps, const float* dy, const float* w,
                                         const std::vector<std::int32_t>& ids, float* dx) override;
  void gathered_projection_backward_weights(std::int64_t batch, std::int64_t in, std::int64_t out,
                                            std::int64_t rows, std::int64_t steps, const float* x,
                                            const float* dy, const std::vector<std::int32_t>& ids,
                                            float* dw, float* db) override;
  std::int64_t attention_workspace_floats(const AttentionShape& shape) override;
  void attention_forward(const AttentionShape& shape, const float* query, const float* memory,
                         const AttentionWeights& weights, float* context,
                         float* workspace) override;
  void attention_backward(const AttentionShape& shape, const float* query, const float* memory,
                          const AttentionWeights& weights, const float* workspace,
                          const float* dcontext, float* dquery, float* dmemory,
                          const AttentionGradients& gradients) override;

 private:
  dnnl::engine engine_;
  dnnl::stream stream_;
};

}  // namespace tessera::kernels
