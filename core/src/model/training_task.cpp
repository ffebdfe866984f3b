#include "tessera/core/model/training_task.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

namespace tessera {

std::string to_string(TrainingTask task) {
  switch (task) {
    case TrainingTask::regression:
      return "regression";
    case TrainingTask::classification:
      return "classification";
    case TrainingTask::segmentation:
      return "segmentation";
  }
  return "regression";
}

namespace {

TargetLayout layout_of(const ResolvedLayer& loss) {
  const auto& input = loss.input_shapes.at(0);
  if (loss.layer.kind == LayerKind::mse_loss) {
    return {TrainingTask::regression, input.elements_per_sample(), 0};
  }
  if (input.spatial_elements() == 1) return {TrainingTask::classification, 1, input.c};
  return {TrainingTask::segmentation, input.spatial_elements(), input.c};
}

}  // namespace

TargetLayout target_layout(const ModelGraph& model) {
  std::optional<TargetLayout> found;
  for (const auto& layer : model.layers()) {
    if (layer.layer.kind != LayerKind::mse_loss &&
        layer.layer.kind != LayerKind::softmax_cross_entropy) {
      continue;
    }
    const auto layout = layout_of(layer);
    if (found &&
        (found->task != layout.task || found->values_per_sample != layout.values_per_sample ||
         found->classes != layout.classes)) {
      throw std::invalid_argument("model " + model.name() + ": loss " + layer.layer.name +
                                  " wants other targets than the model's first loss");
    }
    found = layout;
  }
  if (!found) {
    throw std::invalid_argument("model " + model.name() +
                                " has no loss layer (mse_loss or softmax_cross_entropy) to train");
  }
  for (const auto& layer : model.layers()) {
    if (const auto* embedding = std::get_if<EmbeddingParams>(&layer.layer.params)) {
      found->token_vocabulary = found->token_vocabulary == 0
                                    ? embedding->vocabulary
                                    : std::min(found->token_vocabulary, embedding->vocabulary);
    }
  }
  return *found;
}

}  // namespace tessera
