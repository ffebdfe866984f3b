// The layer-norm executor: each position's vector of channels normalised on its own, so a
// spatially split layer runs on its planes with no exchange. Scale and shift start at 1 and 0
// (PyTorch's LayerNorm); backward reads the input and the statistics the forward kept.
#include "execution_context.hpp"
#include "pointwise_executors.hpp"
#include "tessera/kernels/layer_kernels.hpp"

namespace tessera::kernels::real {
namespace {

class LayerNorm : public LayerExecutor {
 public:
  LayerNorm(const ResolvedLayer& layer, const LocalShapes& shapes, ExecutionContext& context)
      : LayerExecutor(layer.layer.name),
        affine_(std::get<LayerNormParams>(layer.layer.params).affine),
        batch_(shapes.batch),
        channels_(layer.output_shape.c),
        positions_(shapes.output_voxels),
        context_(context) {
    const auto vectors = static_cast<std::size_t>(batch_ * positions_);
    mean_ = context.device.allocate(vectors * sizeof(float));
    inv_std_ = context.device.allocate(vectors * sizeof(float));
  }
  std::int64_t parameter_floats() const override { return affine_ ? 2 * channels_ : 0; }
  void initialize(std::uint64_t, std::span<float> values) const override {
    for (std::size_t c = 0; c < values.size(); ++c) {
      values[c] = c < static_cast<std::size_t>(channels_) ? 1.0F : 0.0F;
    }
  }
  void forward(StepPart) override {
    context_.device.layers().layer_norm_forward(batch_, channels_, positions_, t_.x[0],
                                                scale(weights_), shift(weights_), t_.y,
                                                mean_->data(), inv_std_->data());
  }
  // The scale and shift gradients come out of the same sums as the input's.
  void backward_data(StepPart) override {
    context_.device.layers().layer_norm_backward(
        batch_, channels_, positions_, t_.x[0], t_.dy, mean_->data(), inv_std_->data(),
        scale(weights_), t_.dx[0], scale(gradients_), shift(gradients_), 0.0F);
  }

 private:
  template <typename Pointer>
  Pointer scale(Pointer base) const {
    return affine_ ? base : nullptr;
  }
  template <typename Pointer>
  Pointer shift(Pointer base) const {
    return affine_ ? base + channels_ : nullptr;
  }

  bool affine_;
  std::int64_t batch_, channels_, positions_;
  ExecutionContext& context_;
  std::unique_ptr<DeviceMemory> mean_, inv_std_;
};

}  // namespace

std::unique_ptr<LayerExecutor> make_layer_norm_executor(const ResolvedLayer& layer,
                                                        const LocalShapes& shapes,
                                                        ExecutionContext& context) {
  return std::make_unique<LayerNorm>(layer, shapes, context);
}

}  // namespace tessera::kernels::real
