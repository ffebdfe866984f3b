#pragma once
// One node of a model's dataflow graph: what operation it is, its hyper-parameters as the user
// gave them, and which layers feed it. Shapes are inferred later (shape_inference.hpp), so a
// kernel given as one number applies to every spatial axis.
//
// Sequences (recurrent models) are tensors with one spatial axis, time: N x C x T. Token ids are
// an input of one channel per token stream (a translation model reads two: source and target),
// stored as numbers in the model's dtype.
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace tessera {

enum class LayerKind {
  input,
  convolution,
  transposed_convolution,
  pooling,
  batch_norm,
  relu,
  leaky_relu,
  dropout,
  fully_connected,
  concat,
  add,
  softmax_cross_entropy,
  mse_loss,
  lstm,                // a recurrent layer over the time axis of N x C x T
  embedding,           // token ids N x 1 x T (one channel of the input) to N x dim x T
  attention,           // additive (Bahdanau) attention of a query sequence over a memory sequence
  projection,          // a linear map at every time step (the softmax layer over a vocabulary)
  gelu,                // the Gaussian error linear unit x * Phi(x) of transformers' MLPs
  layer_norm,          // normalisation over the channels at each position (transformers)
  self_attention,      // multi-head self-attention over the time steps of N x C x T
  position_embedding,  // a learned vector per time step added to N x C x T
};

std::string to_string(LayerKind kind);
// A convolution or a transposed one: the layers with algorithms, workspaces and micro-batching.
bool is_convolution(LayerKind kind);
const std::vector<std::string>& layer_kind_names();  // as written in model files ("conv", ...)
LayerKind layer_kind_from_name(const std::string& name);

// A per-axis hyper-parameter: one value for all axes, or one per spatial axis ((D,) H, W).
using AxisValues = std::vector<std::int64_t>;

struct InputParams {
  std::int64_t channels = 1;
  std::vector<std::int64_t> spatial;  // (D,) H, W of one sample
};

struct ConvolutionParams {
  std::int64_t out_channels = 0;
  AxisValues kernel{1};
  AxisValues stride{1};
  AxisValues padding{0};
  AxisValues dilation{1};
  AxisValues output_padding{0};  // transposed convolution only
  std::int64_t groups = 1;
  bool bias = false;
};

enum class PoolMode { max, average };

struct PoolingParams {
  PoolMode mode = PoolMode::max;
  AxisValues kernel{2};
  AxisValues stride{2};
  AxisValues padding{0};
  bool ceil_mode = false;
  bool global = false;  // reduce every spatial axis to 1 (kernel = whole extent)
  // Like PyTorch's AdaptiveAvgPool(n): when > 0, kernel and stride are chosen to give n per axis
  // (stride floor(s/n), kernel s - (n-1)*stride; exact when n divides s).
  std::int64_t adaptive_output = 0;
};

struct BatchNormParams {
  bool affine = true;             // learnable scale and shift
  bool global_statistics = true;  // statistics over the whole sample, even when it is split
};

struct LeakyReluParams {
  double negative_slope = 0.01;
};

struct DropoutParams {
  double drop_probability = 0.5;
};

struct FullyConnectedParams {
  std::int64_t out_features = 0;
  bool bias = true;
};

// LSTM bias vectors: TensorFlow's LSTMCell keeps one per gate, cuDNN and PyTorch two (b_ih and
// b_hh). Published parameter counts differ by exactly this.
enum class LstmBias { none, single, double_ };

struct LstmParams {
  std::int64_t hidden = 0;      // cell units H
  std::int64_t projection = 0;  // P: output and recurrent state projected to P (0: none)
  bool bidirectional = false;   // a forward and a backward pass, outputs concatenated
  LstmBias bias = LstmBias::double_;
};

struct EmbeddingParams {
  std::int64_t vocabulary = 0;
  std::int64_t dimension = 0;
  std::int64_t channel = 0;  // which token stream (input channel) it looks up
  // Another embedding layer whose table this one reads (tied weights, e.g. GNMT's shared source
  // and target embedding): no parameters of its own.
  std::string shared_with;
};

// Bahdanau et al. (2015) additive attention, normalised as in Luong/TensorFlow's
// BahdanauAttention(normalize=True) and MLPerf GNMT: inputs are the query sequence and the
// memory (keys = values); the output is the memory's context vector at every query step.
struct AttentionParams {
  std::int64_t units = 0;  // width of the projected query and keys
  bool normalize = true;   // weight-normalised score vector with a scalar gain and a bias
};

struct ProjectionParams {
  std::int64_t out_features = 0;  // e.g. the vocabulary
  bool bias = true;
  // An embedding layer whose table this one reads as its weights (the language-model head tied to
  // the token embedding, as GPT-2 and BERT do): out_features must be the table's rows and the
  // input's channels its columns; no weights of its own besides the bias.
  std::string shared_with;
  // > 0: training scores only this many sampled classes besides each position's target (a
  // sampled softmax, Jean et al. 2015, as TensorFlow's sampled_softmax_loss), so the output has
  // sampled + 1 channels; the weights are still the full out_features rows.
  std::int64_t sampled = 0;
};

// GELU (Hendrycks & Gimpel 2016) as PyTorch's GELU(approximate=...): exact, x * Phi(x) with the
// normal distribution's erf, or the tanh approximation of GPT-2 and BERT's reference code.
enum class GeluApproximation { none, tanh };

struct GeluParams {
  GeluApproximation approximation = GeluApproximation::none;
};

struct LayerNormParams {
  bool affine = true;  // learnable scale and shift per channel
};

// Multi-head self-attention: `heads` divides the channels; causal masks each step to the steps
// before it (GPT); fused is one kernel that keeps no T x T tensor (FlashAttention), unfused
// keeps the attention probabilities for backward.
struct SelfAttentionParams {
  std::int64_t heads = 1;
  bool causal = false;
  bool bias = true;
  bool fused = true;
  // Tensor parallelism's shard (tensor_role.hpp): `heads` of the layer's heads split this many
  // ways, each of C / (heads x tensor_parts) channels: its Q, K and V and the output
  // projection's input are this share of the channels. 1 in model files.
  std::int64_t tensor_parts = 1;
};

struct PositionEmbeddingParams {
  std::int64_t positions = 0;  // the table's rows: the longest sequence it serves
};

struct NoParams {};

using LayerParams =
    std::variant<NoParams, InputParams, ConvolutionParams, PoolingParams, BatchNormParams,
                 LeakyReluParams, DropoutParams, FullyConnectedParams, LstmParams, EmbeddingParams,
                 AttentionParams, ProjectionParams, GeluParams, LayerNormParams,
                 SelfAttentionParams, PositionEmbeddingParams>;

std::string to_string(LstmBias bias);  // "none", "single", "double" as in model files
std::string to_string(GeluApproximation approximation);  // "none", "tanh" as in model files

// The kinds recurrent models add (lstm, embedding, attention, projection). The real backend runs
// them on CPU ranks (oneDNN) and skips their points on GPU ranks (cuDNN's RNN is not wired).
bool is_sequence_kind(LayerKind kind);
// Kinds whose output at one time step reads other steps (an LSTM's recurrence, attention over the
// whole memory): spatial parallelism cannot split them along time.
bool depends_across_time(LayerKind kind);

struct Layer {
  std::string name;
  LayerKind kind = LayerKind::relu;
  LayerParams params;
  std::vector<std::string> inputs;  // names of producer layers, in order
};

}  // namespace tessera
