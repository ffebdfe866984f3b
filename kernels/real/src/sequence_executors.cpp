// Which executor a recurrent model's layer gets, and what they share: the device's sequence
// kernels and a tied embedding's owner.
#include "sequence_executors.hpp"

#include <stdexcept>

#include "execution_context.hpp"
#include "tessera/kernels/sequence_kernels.hpp"

namespace tessera::kernels::real {

SequenceKernels& sequence_kernels_for(const std::string& layer, ExecutionContext& context) {
  auto* kernels = context.device.sequences();
  if (kernels == nullptr) {
    throw std::invalid_argument("layer " + layer + ": " + context.device.info().name +
                                " has no kernels for recurrent models' layers yet (the real "
                                "backend runs them on CPU ranks)");
  }
  return *kernels;
}

std::unique_ptr<LayerExecutor> make_sequence_executor(const ModelGraph& model, std::size_t index,
                                                      bool spatially_split,
                                                      const LocalShapes& shapes,
                                                      const StepProgram& program,
                                                      ExecutionContext& context) {
  const auto& layer = model.layers().at(index);
  if (spatially_split) {
    throw std::invalid_argument("layer " + layer.layer.name + ": " + to_string(layer.layer.kind) +
                                " layers are not split over a spatial group by the real backend");
  }
  sequence_kernels_for(layer.layer.name, context);
  switch (layer.layer.kind) {
    case LayerKind::lstm:
      return make_lstm_executor(layer, shapes, context);
    case LayerKind::embedding:
      return make_embedding_executor(model, index, shapes, program, context);
    case LayerKind::attention:
      return make_attention_executor(layer, shapes, context);
    case LayerKind::projection:
      return make_projection_executor(model, index, shapes, program, context);
    case LayerKind::self_attention:
      return make_self_attention_executor(layer, shapes, context);
    case LayerKind::position_embedding:
      return make_position_embedding_executor(layer, shapes, context);
    default:
      throw std::invalid_argument("layer " + layer.layer.name + ": " + to_string(layer.layer.kind) +
                                  " layers are not yet supported by the real backend");
  }
}

bool scores_target_first(const ModelGraph& model, std::size_t index) {
  const auto& inputs = model.layers().at(index).input_indices;
  if (inputs.empty()) return false;
  const auto* projection =
      std::get_if<ProjectionParams>(&model.layers().at(inputs.front()).layer.params);
  return projection != nullptr && projection->sampled > 0;
}

}  // namespace tessera::kernels::real
