// An LSTM layer on the device's LSTM kernels. Its parameters are the tensors of core's count
// (core/src/model/kinds/lstm.cpp) in the kernels' layouts (sequence_kernels.hpp): input weights,
// recurrent weights, the bias vectors, the projection. With two bias vectors per gate (cuDNN and
// PyTorch's b_ih and b_hh) the cell sees their sum and each gets the same gradient; with none it
// sees zeros. One backward kernel gives the input and the weight gradients: it runs at the
// backward-data op (or at backward-filter where there is none) and writes both.
#include <cmath>

#include "execution_context.hpp"
#include "sequence_executors.hpp"
#include "tessera/kernels/layer_kernels.hpp"
#include "tessera/kernels/sequence_kernels.hpp"

namespace tessera::kernels::real {
namespace {

std::int64_t bias_vectors(LstmBias bias) {
  return bias == LstmBias::none ? 0 : bias == LstmBias::single ? 1 : 2;
}

class Lstm : public LayerExecutor {
 public:
  Lstm(const ResolvedLayer& layer, const LocalShapes& shapes, ExecutionContext& context)
      : LayerExecutor(layer.layer.name),
        kernels_(sequence_kernels_for(layer.layer.name, context)),
        context_(context) {
    const auto& p = std::get<LstmParams>(layer.layer.params);
    shape_ = {.batch = shapes.batch,
              .steps = layer.output_shape.spatial.at(0),
              .input = layer.input_shapes.at(0).c,
              .hidden = p.hidden,
              .projection = p.projection,
              .bidirectional = p.bidirectional};
    biases_ = bias_vectors(p.bias);
    const std::int64_t d = shape_.directions();
    input_floats_ = d * shape_.input * 4 * shape_.hidden;
    recurrent_floats_ = d * shape_.recurrent() * 4 * shape_.hidden;
    bias_floats_ = d * 4 * shape_.hidden;
    projection_floats_ = d * shape_.hidden * shape_.projection;
    workspace_ = context.device.allocate(
        static_cast<std::size_t>(kernels_.lstm_workspace_floats(shape_)) * sizeof(float));
    if (biases_ != 1) {
      // The cell's bias: the sum of two vectors, or zeros; and its gradient before it is copied.
      bias_ = context.device.allocate(static_cast<std::size_t>(2 * bias_floats_) * sizeof(float));
      context.device.fill(bias_->data(), static_cast<std::size_t>(2 * bias_floats_), 0);
    }
  }
  std::int64_t parameter_floats() const override {
    return input_floats_ + recurrent_floats_ + biases_ * bias_floats_ + projection_floats_;
  }
  void initialize(std::uint64_t seed, std::span<float> values) const override {
    // PyTorch's nn.LSTM: every weight and bias uniform within 1/sqrt(H).
    fill_uniform(seed, 0, static_cast<float>(1.0 / std::sqrt(static_cast<double>(shape_.hidden))),
                 values);
  }
  void forward(StepPart) override {
    kernels_.lstm_forward(shape_, t_.x[0], weights(), t_.y, workspace_->data());
    backward_done_ = false;
  }
  void backward_data(StepPart) override { backward(t_.dx[0]); }
  void backward_filter() override {
    if (!backward_done_) backward(nullptr);
  }

 private:
  LstmWeights weights() {
    const float* bias = weights_ + input_floats_ + recurrent_floats_;
    if (biases_ == 2) {
      auto& layers = context_.device.layers();
      context_.device.copy_on_device(bias, bias_->data(), static_cast<std::size_t>(bias_floats_));
      layers.axpy(bias_floats_, 1.0F, bias + bias_floats_, bias_->data());
    }
    return {.input = weights_,
            .recurrent = weights_ + input_floats_,
            .bias = biases_ == 1 ? bias : bias_->data(),
            .projection = shape_.projection > 0 ? bias + biases_ * bias_floats_ : nullptr};
  }

  void backward(float* dx) {
    float* bias = gradients_ + input_floats_ + recurrent_floats_;
    float* bias_gradient = biases_ == 1 ? bias : bias_->data() + bias_floats_;
    kernels_.lstm_backward(
        shape_, weights(), workspace_->data(), t_.dy, dx,
        {.input = gradients_,
         .recurrent = gradients_ + input_floats_,
         .bias = bias_gradient,
         .projection = shape_.projection > 0 ? bias + biases_ * bias_floats_ : nullptr});
    for (std::int64_t b = 0; b < biases_ && biases_ == 2; ++b) {
      context_.device.copy_on_device(bias_gradient, bias + b * bias_floats_,
                                     static_cast<std::size_t>(bias_floats_));
    }
    backward_done_ = true;
  }

  SequenceKernels& kernels_;
  ExecutionContext& context_;
  LstmShape shape_;
  std::int64_t biases_ = 0;
  std::int64_t input_floats_ = 0, recurrent_floats_ = 0, bias_floats_ = 0, projection_floats_ = 0;
  std::unique_ptr<DeviceMemory> workspace_;
  std::unique_ptr<DeviceMemory> bias_;
  bool backward_done_ = false;
};

}  // namespace

std::unique_ptr<LayerExecutor> make_lstm_executor(const ResolvedLayer& layer,
                                                  const LocalShapes& shapes,
                                                  ExecutionContext& context) {
  return std::make_unique<Lstm>(layer, shapes, context);
}

}  // namespace tessera::kernels::real
