// The position-embedding executor: row t of the table added at step t of every sequence, the
// table's gradient the output gradient summed over the batch. Small values to start, as the
// embeddings' (GPT-2 draws its tables with a standard deviation of 0.01 to 0.02).
#include "execution_context.hpp"
#include "sequence_executors.hpp"

namespace tessera::kernels::real {
namespace {

class PositionEmbedding : public LayerExecutor {
 public:
  PositionEmbedding(const ResolvedLayer& layer, const LocalShapes& shapes,
                    ExecutionContext& context)
      : LayerExecutor(layer.layer.name),
        batch_(shapes.batch),
        dimension_(layer.output_shape.c),
        steps_(layer.output_shape.spatial.at(0)),
        positions_(std::get<PositionEmbeddingParams>(layer.layer.params).positions),
        kernels_(sequence_kernels_for(layer.layer.name, context)),
        context_(context) {}
  std::int64_t parameter_floats() const override { return positions_ * dimension_; }
  void initialize(std::uint64_t seed, std::span<float> values) const override {
    fill_uniform(seed, 0, 0.02F, values);
  }
  void forward(StepPart) override {
    kernels_.position_embedding_forward(batch_, dimension_, steps_, weights_, t_.x[0], t_.y);
  }
  void backward_data(StepPart) override {
    if (t_.dx[0] == nullptr) return;
    context_.device.copy_on_device(t_.dy, t_.dx[0],
                                   static_cast<std::size_t>(batch_ * dimension_ * steps_));
  }
  void backward_filter() override {
    kernels_.position_embedding_backward(batch_, dimension_, steps_, positions_, t_.dy, gradients_,
                                         0.0F);
  }

 private:
  std::int64_t batch_, dimension_, steps_, positions_;
  SequenceKernels& kernels_;
  ExecutionContext& context_;
};

}  // namespace

std::unique_ptr<LayerExecutor> make_position_embedding_executor(const ResolvedLayer& layer,
                                                                const LocalShapes& shapes,
                                                                ExecutionContext& context) {
  return std::make_unique<PositionEmbedding>(layer, shapes, context);
}

}  // namespace tessera::kernels::real
