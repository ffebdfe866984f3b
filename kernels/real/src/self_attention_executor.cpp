// The self-attention executor: one layer's Q, K, V and output projections in one parameter block
// (W_qkv, b_qkv, W_o, b_o, the biases only with `bias`), the unfused CPU kernels keeping their
// workspace from forward to backward. PyTorch's Linear initialisation: uniform within
// 1/sqrt(channels).
//
// Split over a tensor group by heads (Megatron-LM), a rank holds its heads' rows of W_qkv and
// b_qkv (C' = C / tensor_parts of each of Q, K and V), their columns of W_o and the whole b_o: its
// output is a partial sum that the group's all-reduce adds, so one rank adds b_o. Its values are
// that part of the whole layer's.
#include <algorithm>
#include <cmath>

#include "execution_context.hpp"
#include "sequence_executors.hpp"

namespace tessera::kernels::real {
namespace {

class SelfAttention : public LayerExecutor {
 public:
  SelfAttention(const ResolvedLayer& layer, const LocalShapes& shapes, ExecutionContext& context)
      : LayerExecutor(layer.layer.name),
        bias_(std::get<SelfAttentionParams>(layer.layer.params).bias),
        part_(shapes.tensor),
        shape_{
            .batch = shapes.batch,
            .channels = layer.output_shape.c,
            .steps = layer.output_shape.spatial.at(0),
            .heads = std::get<SelfAttentionParams>(layer.layer.params).heads,
            .causal = std::get<SelfAttentionParams>(layer.layer.params).causal,
            .attention_channels = layer.output_shape.c /
                                  std::get<SelfAttentionParams>(layer.layer.params).tensor_parts},
        kernels_(sequence_kernels_for(layer.layer.name, context)) {
    workspace_ = context.device.allocate(
        static_cast<std::size_t>(kernels_.self_attention_workspace_floats(shape_)) * sizeof(float));
  }
  std::int64_t parameter_floats() const override {
    const std::int64_t c = shape_.channels, a = shape_.inner();
    return 4 * c * a + (bias_ ? 3 * a + c : 0);
  }
  void initialize(std::uint64_t seed, std::span<float> values) const override {
    const std::int64_t c = shape_.channels;
    const auto bound = static_cast<float>(1.0 / std::sqrt(static_cast<double>(c)));
    take_part(uniform_values(seed, 0, bound, 4 * c * c + (bias_ ? 4 * c : 0)), values);
  }
  // The whole layer's block is W_qkv (3C x C), b_qkv, W_o (C x C), b_o; this rank's heads are
  // channels first .. first + C' - 1 of each of Q, K and V.
  void take_part(std::span<const float> whole, std::span<float> values) const override {
    const std::int64_t c = shape_.channels, a = shape_.inner();
    const std::int64_t first = a * (a == c ? 0 : part_.index);
    auto next = values.begin();
    for (std::int64_t block = 0; block < 3; ++block) {
      next = std::copy_n(whole.begin() + (block * c + first) * c, a * c, next);
    }
    const std::int64_t qkv_bias = 3 * c * c, output = qkv_bias + (bias_ ? 3 * c : 0);
    if (bias_) {
      for (std::int64_t block = 0; block < 3; ++block) {
        next = std::copy_n(whole.begin() + qkv_bias + block * c + first, a, next);
      }
    }
    for (std::int64_t row = 0; row < c; ++row) {
      next = std::copy_n(whole.begin() + output + row * c + first, a, next);
    }
    if (bias_) std::copy_n(whole.begin() + output + c * c, c, next);
  }
  void forward(StepPart) override {
    auto w = weights(weights_);
    if (!part_.adds_bias()) w.output_bias = nullptr;  // another rank of the group adds it
    kernels_.self_attention_forward(shape_, t_.x[0], w, t_.y, workspace_->data());
  }
  // The input's and the parameters' gradients come from the same pass through the heads.
  void backward_data(StepPart) override {
    kernels_.self_attention_backward(shape_, t_.x[0], weights(weights_), workspace_->data(), t_.dy,
                                     t_.dx[0], parts(gradients_));
  }

 private:
  // The parameter block's parts (weights or gradients): W_qkv, b_qkv, W_o, b_o.
  SelfAttentionGradients parts(float* base) const {
    const std::int64_t c = shape_.channels, a = shape_.inner();
    float* output = base + 3 * a * c + (bias_ ? 3 * a : 0);
    return {base, bias_ ? base + 3 * a * c : nullptr, output, bias_ ? output + c * a : nullptr};
  }
  SelfAttentionWeights weights(float* base) const {
    const auto p = parts(base);
    return {p.qkv, p.qkv_bias, p.output, p.output_bias};
  }

  bool bias_;
  TensorPart part_;
  SelfAttentionShape shape_;
  SequenceKernels& kernels_;
  std::unique_ptr<DeviceMemory> workspace_;
};

}  // namespace

std::unique_ptr<LayerExecutor> make_self_attention_executor(const ResolvedLayer& layer,
                                                            const LocalShapes& shapes,
                                                            ExecutionContext& context) {
  return std::make_unique<SelfAttention>(layer, shapes, context);
}

}  // namespace tessera::kernels::real
