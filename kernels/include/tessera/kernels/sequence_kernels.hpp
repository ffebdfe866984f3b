#pragma once
// The primitives of recurrent models (core's lstm, embedding, attention and projection layers,
// layer.hpp), on one device. Sequences are dense float32 N x C x T (time innermost), as every
// other tensor of the real backend. Backward kernels overwrite the gradients they are given
// (a null one is not wanted) unless they take a beta.
#include <cstdint>
#include <vector>

namespace tessera::kernels {

struct LstmShape {
  std::int64_t batch = 1;
  std::int64_t steps = 1;
  std::int64_t input = 1;       // I: input channels
  std::int64_t hidden = 1;      // H: cell units
  std::int64_t projection = 0;  // P: the output and recurrent state projected (0: none)
  bool bidirectional = false;   // outputs of the two directions concatenated (forward first)

  std::int64_t directions() const { return bidirectional ? 2 : 1; }
  std::int64_t recurrent() const { return projection > 0 ? projection : hidden; }  // R
  std::int64_t output_channels() const { return directions() * recurrent(); }
};

// An LSTM's parameters in oneDNN's plain layouts, each tensor for every direction in turn:
// input weights D x I x 4 x H, recurrent weights D x R x 4 x H, bias D x 4 x H, projection
// D x H x P (with a projection). Gates in oneDNN's order: input, forget, cell, output.
struct LstmWeights {
  const float* input = nullptr;
  const float* recurrent = nullptr;
  const float* bias = nullptr;
  const float* projection = nullptr;
};
struct LstmGradients {
  float* input = nullptr;
  float* recurrent = nullptr;
  float* bias = nullptr;
  float* projection = nullptr;
};

struct AttentionShape {
  std::int64_t batch = 1;
  std::int64_t query_channels = 1;   // Cq
  std::int64_t query_steps = 1;      // Tq
  std::int64_t memory_channels = 1;  // Cm
  std::int64_t memory_steps = 1;     // Tm
  std::int64_t units = 1;            // U
  bool normalize = true;
};

// Attention's parameters: query weights U x Cq, key weights U x Cm, score vector v (U), and when
// normalised the score bias (U) and the scalar gain g.
struct AttentionWeights {
  const float* query = nullptr;
  const float* key = nullptr;
  const float* score = nullptr;
  const float* bias = nullptr;
  const float* gain = nullptr;
};
struct AttentionGradients {
  float* query = nullptr;
  float* key = nullptr;
  float* score = nullptr;
  float* bias = nullptr;
  float* gain = nullptr;
};

// Multi-head self-attention over N x C x T: Q, K, V = W_qkv x + b_qkv (3C x C, rows Q then K then
// V, each head's d = C / heads rows together), per head softmax(Q^T K / sqrt(d)) over the key
// steps (masked to steps <= the query's when causal), the heads' outputs stacked as C x T, then
// y = W_o o + b_o (C x C).
// The rows of an embedding table a rank holds: all of them, or under tensor parallelism its
// share of the vocabulary.
struct TableRows {
  std::int64_t vocabulary = 0;  // token ids lie in [0, vocabulary)
  std::int64_t first = 0;       // the first row held
  std::int64_t count = 0;       // rows held
  static TableRows whole(std::int64_t vocabulary) { return {vocabulary, 0, vocabulary}; }
};

struct SelfAttentionShape {
  std::int64_t batch = 1;
  std::int64_t channels = 1;  // of the input and the output
  std::int64_t steps = 1;
  std::int64_t heads = 1;
  bool causal = false;
  // Of Q, K, V and the heads' output, when the heads are a tensor group's share: W_qkv is then
  // 3 C' x C and W_o C x C' (the output a partial sum); 0: `channels`.
  std::int64_t attention_channels = 0;
  std::int64_t inner() const { return attention_channels > 0 ? attention_channels : channels; }
};

// Self-attention's parameters, or their gradients; the biases may be null (both or neither).
template <typename Pointer>
struct SelfAttentionTensors {
  Pointer qkv = nullptr;
  Pointer qkv_bias = nullptr;
  Pointer output = nullptr;
  Pointer output_bias = nullptr;
};
using SelfAttentionWeights = SelfAttentionTensors<const float*>;
using SelfAttentionGradients = SelfAttentionTensors<float*>;

class SequenceKernels {
 public:
  virtual ~SequenceKernels() = default;

  // What lstm_forward keeps for lstm_backward (the library's workspace and the sequences in its
  // layout), in floats.
  virtual std::int64_t lstm_workspace_floats(const LstmShape& shape) = 0;
  // x: N x I x T, y: N x (D R) x T, from a zero initial state.
  virtual void lstm_forward(const LstmShape& shape, const float* x, const LstmWeights& weights,
                            float* y, float* workspace) = 0;
  // The input gradient (dx may be null) and every parameter's gradient (overwritten), from the
  // workspace of the forward of the same x and weights.
  virtual void lstm_backward(const LstmShape& shape, const LstmWeights& weights,
                             const float* workspace, const float* dy, float* dx,
                             const LstmGradients& gradients) = 0;

  // y[n, :, t] = table[token(n, t)], token(n, t) = tokens[n, channel, t] (ids stored as floats,
  // of `channels` streams), the table holding `rows`; a token of a row held elsewhere gives a
  // zero row. Throws std::invalid_argument for an id outside [0, rows.vocabulary).
  virtual void embedding_forward(std::int64_t batch, std::int64_t channels, std::int64_t steps,
                                 std::int64_t channel, const TableRows& rows,
                                 std::int64_t dimension, const float* tokens, const float* table,
                                 float* y) = 0;
  // dtable = beta * dtable + the rows of dy added at their tokens (beta 0 or 1), the tokens of
  // rows held here.
  virtual void embedding_backward(std::int64_t batch, std::int64_t channels, std::int64_t steps,
                                  std::int64_t channel, const TableRows& rows,
                                  std::int64_t dimension, const float* tokens, const float* dy,
                                  float* dtable, float beta) = 0;

  // A learned position embedding: y[n, :, t] = x[n, :, t] + table[t] for the first `steps` rows
  // of a positions x dimension table; dtable = beta * dtable + dy summed over the batch at each
  // step (beta 0 or 1; rows past `steps` get no gradient).
  virtual void position_embedding_forward(std::int64_t batch, std::int64_t dimension,
                                          std::int64_t steps, const float* table, const float* x,
                                          float* y) = 0;
  virtual void position_embedding_backward(std::int64_t batch, std::int64_t dimension,
                                           std::int64_t steps, std::int64_t positions,
                                           const float* dy, float* dtable, float beta) = 0;

  // y[n, :, t] = w x[n, :, t] + b at every step (w: out x in, b may be null).
  virtual void projection_forward(std::int64_t batch, std::int64_t in, std::int64_t out,
                                  std::int64_t steps, const float* x, const float* w,
                                  const float* b, float* y) = 0;
  virtual void projection_backward_data(std::int64_t batch, std::int64_t in, std::int64_t out,
                                        std::int64_t steps, const float* dy, const float* w,
                                        float* dx) = 0;
  // dw = beta * dw + sum over samples of dy x^T; db likewise (may be null); beta 0 or 1.
  virtual void projection_backward_weights(std::int64_t batch, std::int64_t in, std::int64_t out,
                                           std::int64_t steps, const float* x, const float* dy,
                                           float* dw, float* db, float beta) = 0;
  // db = sum over samples and steps of dy (overwritten): a bias kept apart from its matrix (a
  // head tied to an embedding's table with a bias of its own).
  virtual void projection_backward_bias(std::int64_t batch, std::int64_t out, std::int64_t steps,
                                        const float* dy, float* db) = 0;

  // A sampled softmax's scores: only `rows` of w per position, chosen per position (host ids,
  // N x rows x T: row(n, k, t)), each less its host `offsets` entry (the same layout):
  // y[n, k, t] = w[row(n, k, t)] . x[n, :, t] + b[row(n, k, t)] - offsets[n, k, t] (b may be null).
  virtual void gathered_projection_forward(std::int64_t batch, std::int64_t in, std::int64_t rows,
                                           std::int64_t steps, const float* x, const float* w,
                                           const float* b, const std::vector<std::int32_t>& ids,
                                           const std::vector<float>& offsets, float* y) = 0;
  virtual void gathered_projection_backward_data(std::int64_t batch, std::int64_t in,
                                                 std::int64_t rows, std::int64_t steps,
                                                 const float* dy, const float* w,
                                                 const std::vector<std::int32_t>& ids,
                                                 float* dx) = 0;
  // dw (out x in) and db (out, may be null) overwritten: zero but at the rows scored.
  virtual void gathered_projection_backward_weights(std::int64_t batch, std::int64_t in,
                                                    std::int64_t out, std::int64_t rows,
                                                    std::int64_t steps, const float* x,
                                                    const float* dy,
                                                    const std::vector<std::int32_t>& ids, float* dw,
                                                    float* db) = 0;

  // Keeps Q, K, V, the attention probabilities and the heads' outputs from forward to backward,
  // and holds backward's intermediate gradients, so that a step allocates nothing.
  virtual std::int64_t self_attention_workspace_floats(const SelfAttentionShape& shape) = 0;
  virtual void self_attention_forward(const SelfAttentionShape& shape, const float* x,
                                      const SelfAttentionWeights& weights, float* y,
                                      float* workspace) = 0;
  // dx (may be null) and the parameter gradients (overwritten).
  virtual void self_attention_backward(const SelfAttentionShape& shape, const float* x,
                                       const SelfAttentionWeights& weights, float* workspace,
                                       const float* dy, float* dx,
                                       const SelfAttentionGradients& gradients) = 0;

  // Keeps the scores' tanh and the attention weights for backward.
  virtual std::int64_t attention_workspace_floats(const AttentionShape& shape) = 0;
  // query N x Cq x Tq, memory N x Cm x Tm, context N x Cm x Tq.
  virtual void attention_forward(const AttentionShape& shape, const float* query,
                                 const float* memory, const AttentionWeights& weights,
                                 float* context, float* workspace) = 0;
  // Input gradients (either may be null) and parameter gradients (overwritten).
  virtual void attention_backward(const AttentionShape& shape, const float* query,
                                  const float* memory, const AttentionWeights& weights,
                                  const float* workspace, const float* dcontext, float* dquery,
                                  float* dmemory, const AttentionGradients& gradients) = 0;
};

}  // namespace tessera::kernels
