#pragma once
// What one layer costs for a given batch: floating-point operations per training direction,
// parameters, and the bytes of the tensors it produces and keeps for backward.
//
// FLOPs count a multiply-add as 2. Convolutions, fully connected layers and the matrix products of
// the sequence layers are exact; element-wise work uses the per-element constants documented in
// their kinds' rules (core/src/model/kinds/).
#include <cstdint>

#include "tessera/core/common/dtype.hpp"
#include "tessera/core/model/model_graph.hpp"

namespace tessera {

struct LayerFlops {
  double forward = 0;
  double backward_data = 0;    // gradient with respect to the input
  double backward_filter = 0;  // gradient with respect to weights and bias
  double total() const { return forward + backward_data + backward_filter; }
};

// Which tensors a layer's backward pass reads besides the output gradient. This is what memory
// planning keeps resident, or offloads to the host, between forward and backward.
struct BackwardNeeds {
  bool input = false;   // e.g. convolution (for the filter gradient), batch-norm, LeakyReLU
  bool output = false;  // e.g. ReLU, max pooling, softmax
  bool mask = false;    // dropout's keep mask (one byte per element)
};

struct LayerCost {
  LayerFlops flops;
  std::int64_t parameters = 0;
  std::int64_t output_bytes = 0;  // the activation this layer produces
  std::int64_t weight_bytes = 0;  // parameters in the model's dtype
  // The weights one pass reads: all of them, except where a layer touches only some rows (an
  // embedding's looked-up tokens, a sampled softmax's classes). The roofline streams these.
  std::int64_t weight_bytes_read = 0;
  BackwardNeeds backward_needs;
  // Tensors of the layer's own that backward reads (dropout's mask, an LSTM's gates and cell
  // states, attention's scores); its input and output are other layers' and not counted here.
  std::int64_t saved_for_backward_bytes = 0;
  // Per direction, the bytes a layer made of several kernels moves between them through device
  // memory (unfused attention's scores and probabilities, written by one product, read and
  // written by the softmax, read by the next product): memory-bound kernels of their own, whose
  // time the roofline adds to that of the layer's products and operands.
  LayerFlops intermediate_bytes;
};

// Costs for `batch` samples with the layer's shapes (which may be a GPU's local shard).
LayerCost layer_cost(const Layer& layer, const std::vector<TensorShape>& input_shapes,
                     const TensorShape& output_shape, std::int64_t batch, DType dtype);
LayerCost layer_cost(const ResolvedLayer& layer, std::int64_t batch, DType dtype);

std::int64_t parameter_count(const ResolvedLayer& layer);
std::int64_t parameter_count(const ModelGraph& model);
// Whether the layer's backward has a weight-gradient kernel: it has parameters, or it reads an
// embedding's table (tied weights), whose gradient it adds into the owner's.
bool computes_weight_gradients(const Layer& layer, std::int64_t parameters);
BackwardNeeds backward_needs(const Layer& layer);

}  // namespace tessera
