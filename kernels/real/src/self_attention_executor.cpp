// The self-attention executor: one layer's Q, K, V and output projections in one parameter block
// (W_qkv, b_qkv, W_o, b_o, the biases only with `bias`), the unfused CPU kernels keeping their
// workspace from forward to backward. PyTorch's Linear initialisation: uniform within
// 1/sqrt(channels).
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
        shape_{.batch = shapes.batch,
               .channels = layer.output_shape.c,
               .steps = layer.output_shape.spatial.at(0),
               .heads = std::get<SelfAttentionParams>(layer.layer.params).heads,
               .causal = std::get<SelfAttentionParams>(layer.layer.params).causal},
        kernels_(sequence_kernels_for(layer.layer.name, context)) {
    workspace_ = context.device.allocate(
        static_cast<std::size_t>(kernels_.self_attention_workspace_floats(shape_)) * sizeof(float));
  }
  std::int64_t parameter_floats() const override {
    const std::int64_t c = shape_.channels;
    return 4 * c * c + (bias_ ? 4 * c : 0);
  }
  void initialize(std::uint64_t seed, std::span<float> values) const override {
    const auto bound = static_cast<float>(1.0 / std::sqrt(static_cast<double>(shape_.channels)));
    fill_uniform(seed, 0, bound, values);
  }
  void forward(StepPart) override {
    kernels_.self_attention_forward(shape_, t_.x[0], weights(weights_), t_.y, workspace_->data());
  }
  // The input's and the parameters' gradients come from the same pass through the heads.
  void backward_data(StepPart) override {
    kernels_.self_attention_backward(shape_, t_.x[0], weights(weights_), workspace_->data(), t_.dy,
                                     t_.dx[0], parts(gradients_));
  }

 private:
  // The parameter block's parts (weights or gradients): W_qkv, b_qkv, W_o, b_o.
  SelfAttentionGradients parts(float* base) const {
    const std::int64_t c = shape_.channels;
    float* output = base + 3 * c * c + (bias_ ? 3 * c : 0);
    return {base, bias_ ? base + 3 * c * c : nullptr, output, bias_ ? output + c * c : nullptr};
  }
  SelfAttentionWeights weights(float* base) const {
    const auto p = parts(base);
    return {p.qkv, p.qkv_bias, p.output, p.output_bias};
  }

  bool bias_;
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
