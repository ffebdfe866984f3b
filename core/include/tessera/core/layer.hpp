#pragma once
// One node of a model's dataflow graph: what operation it is, its hyper-parameters as the user
// gave them, and which layers feed it. Shapes are inferred later (shape_inference.hpp), so a
// kernel given as one number applies to every spatial axis.
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
};

std::string to_string(LayerKind kind);
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

struct NoParams {};

using LayerParams =
    std::variant<NoParams, InputParams, ConvolutionParams, PoolingParams, BatchNormParams,
                 LeakyReluParams, DropoutParams, FullyConnectedParams>;

struct Layer {
  std::string name;
  LayerKind kind = LayerKind::relu;
  LayerParams params;
  std::vector<std::string> inputs;  // names of producer layers, in order
};

}  // namespace tessera
