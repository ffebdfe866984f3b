// The GELU layer's executor: element-wise on whatever the rank holds (a spatially split layer's
// planes too); backward reads the input, as core's rules keep it (layer_kind_rules.hpp).
#include "execution_context.hpp"
#include "pointwise_executors.hpp"
#include "tessera/kernels/layer_kernels.hpp"

namespace tessera::kernels::real {
namespace {

class Gelu : public LayerExecutor {
 public:
  Gelu(std::string name, bool tanh_approximation, std::int64_t floats, ExecutionContext& context)
      : LayerExecutor(std::move(name)),
        tanh_approximation_(tanh_approximation),
        floats_(floats),
        context_(context) {}
  void forward(StepPart) override {
    context_.device.layers().gelu_forward(floats_, tanh_approximation_, t_.x[0], t_.y);
  }
  void backward_data(StepPart) override {
    if (t_.dx[0] == nullptr) return;
    context_.device.layers().gelu_backward(floats_, tanh_approximation_, t_.x[0], t_.dy, t_.dx[0]);
  }

 private:
  bool tanh_approximation_;
  std::int64_t floats_;
  ExecutionContext& context_;
};

}  // namespace

std::unique_ptr<LayerExecutor> make_gelu_executor(const ResolvedLayer& layer,
                                                  const LocalShapes& shapes,
                                                  ExecutionContext& context) {
  const bool tanh_approximation =
      std::get<GeluParams>(layer.layer.params).approximation == GeluApproximation::tanh;
  return std::make_unique<Gelu>(layer.layer.name, tanh_approximation, shapes.output_floats,
                                context);
}

}  // namespace tessera::kernels::real
