// A projection: the same linear map at every step of a sequence (the classifier over a
// vocabulary), the full softmax's logits. A sampled softmax (ProjectionParams::sampled) scores
// only some classes per step and needs each step's target in the projection: not run yet.
#include <cmath>
#include <stdexcept>

#include "execution_context.hpp"
#include "sequence_executors.hpp"
#include "tessera/kernels/sequence_kernels.hpp"

namespace tessera::kernels::real {
namespace {

class Projection : public LayerExecutor {
 public:
  Projection(const ResolvedLayer& layer, const LocalShapes& shapes, ExecutionContext& context)
      : LayerExecutor(layer.layer.name),
        batch_(shapes.batch),
        in_(layer.input_shapes.at(0).c),
        out_(layer.output_shape.c),
        steps_(layer.output_shape.spatial.at(0)),
        bias_(std::get<ProjectionParams>(layer.layer.params).bias),
        kernels_(sequence_kernels_for(layer.layer.name, context)) {}
  std::int64_t parameter_floats() const override { return in_ * out_ + (bias_ ? out_ : 0); }
  void initialize(std::uint64_t seed, std::span<float> values) const override {
    // PyTorch's nn.Linear: uniform within 1/sqrt(fan_in), weights and biases alike.
    fill_uniform(seed, 0, static_cast<float>(1.0 / std::sqrt(static_cast<double>(in_))), values);
  }
  void forward(StepPart) override {
    kernels_.projection_forward(batch_, in_, out_, steps_, t_.x[0], weights_,
                                bias_ ? weights_ + in_ * out_ : nullptr, t_.y);
  }
  void backward_data(StepPart) override {
    if (t_.dx[0] == nullptr) return;
    kernels_.projection_backward_data(batch_, in_, out_, steps_, t_.dy, weights_, t_.dx[0]);
  }
  void backward_filter() override {
    kernels_.projection_backward_weights(batch_, in_, out_, steps_, t_.x[0], t_.dy, gradients_,
                                         bias_ ? gradients_ + in_ * out_ : nullptr);
  }

 private:
  std::int64_t batch_, in_, out_, steps_;
  bool bias_;
  SequenceKernels& kernels_;
};

}  // namespace

std::unique_ptr<LayerExecutor> make_projection_executor(const ResolvedLayer& layer,
                                                        const LocalShapes& shapes,
                                                        ExecutionContext& context) {
  const auto& p = std::get<ProjectionParams>(layer.layer.params);
  if (p.sampled > 0) {
    throw std::invalid_argument("layer " + layer.layer.name +
                                ": a sampled softmax (sampled: " + std::to_string(p.sampled) +
                                ") is not yet run by the real backend; use sampled: 0 (the full "
                                "softmax)");
  }
  return std::make_unique<Projection>(layer, shapes, context);
}

}  // namespace tessera::kernels::real
