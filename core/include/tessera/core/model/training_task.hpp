#pragma once
// What a model learns, read off its loss layers: the targets each sample needs, in both
// backends' and the data tools' terms. A mean-squared error regresses values (CosmoFlow's four
// cosmological parameters); a softmax cross-entropy over an input without spatial axes
// classifies each sample, over a spatial input it labels every voxel (3D U-Net segmentation).
#include <cstdint>
#include <string>

#include "tessera/core/model/model_graph.hpp"

namespace tessera {

enum class TrainingTask { regression, classification, segmentation };
std::string to_string(TrainingTask task);

struct TargetLayout {
  TrainingTask task = TrainingTask::regression;
  // Values per sample: regressed values, 1 class label, or one label per voxel.
  std::int64_t values_per_sample = 0;
  std::int64_t classes = 0;  // classification and segmentation
  // > 0: the model reads its input as token ids below this (its embeddings' smallest vocabulary):
  // a sequence model, whose labels are one class per time step (segmentation of the sequence).
  std::int64_t token_vocabulary = 0;
};

// Throws std::invalid_argument naming the model when it has no loss layer, or loss layers that
// want different targets (a classifier's auxiliary heads want the same labels as its main one).
TargetLayout target_layout(const ModelGraph& model);

}  // namespace tessera
