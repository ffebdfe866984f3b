#pragma once
// One convolution, pooling or transformer layer of a model run on a device on seeded random
// operands, with every direction's result and median time brought back to the host, so that
// another implementation of the same layer (analysis/torch_crosscheck.py runs PyTorch) can be fed
// the very same operands and compared with Tessera, number for number and time for time.
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "tessera/core/common/tensor_shape.hpp"
#include "tessera/core/model/layer.hpp"
#include "tessera/kernels/convolution_kernels.hpp"
#include "tessera/kernels/layer_kernels.hpp"

namespace tessera::kernels {

class Device;

// A dense float32 host tensor; shape as PyTorch takes it (NC(D)HW; filters out x in/groups x
// kernel, transposed in x out/groups x kernel).
struct CheckedTensor {
  std::string name;  // x, w, dy (operands); y, dx, dw (results)
  std::vector<std::int64_t> shape;
  std::vector<float> values;
};

struct DirectionTime {
  std::string direction;  // forward, backward_data, backward_filter (pooling: forward, backward)
  std::string algorithm;  // what ran (the library's first choice; pooling: "default")
  double median_seconds = 0;
  int runs = 0;
};

// A transformer's layer over N x C x T (gelu, layer_norm, self_attention): what its kernels take.
struct SequenceLayerGeometry {
  LayerKind kind = LayerKind::gelu;
  std::int64_t channels = 1;
  std::int64_t steps = 1;
  bool tanh_approximation = false;  // gelu
  std::int64_t heads = 1;           // self_attention
  bool causal = false;              // self_attention
};

struct LayerCheck {
  std::string layer;
  std::variant<ConvolutionGeometry, PoolingGeometry, SequenceLayerGeometry> geometry;
  std::int64_t batch = 1;
  std::vector<CheckedTensor> operands;
  std::vector<CheckedTensor> results;
  std::vector<DirectionTime> times;
};

// Convolutions (plain and transposed), pooling layers and the transformers' GELU, affine layer
// norm and self-attention with biases (self-attention on a device with sequence kernels).
bool checkable_layer(const Layer& layer);

// Runs `layer` from `input` to `output` (per-sample shapes) on `batch` samples: every direction
// once to keep its result, then `timed_runs` more for the median time (at least 1).
LayerCheck check_layer(Device& device, const Layer& layer, const TensorShape& input,
                       const TensorShape& output, std::int64_t batch, std::uint32_t seed,
                       int timed_runs);

}  // namespace tessera::kernels
