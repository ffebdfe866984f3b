#include "tensor_split_support.hpp"

#include <algorithm>

namespace tessera::kernels::real {
namespace {

// Layers whose every output channel depends on its own input channel alone, with nothing drawn
// at random: on a share of the channels they compute that share exactly (batch-norm its
// channels' statistics, with their scales and shifts).
bool runs_on_channels_held(LayerKind kind) {
  return kind == LayerKind::gelu || kind == LayerKind::relu || kind == LayerKind::leaky_relu ||
         kind == LayerKind::add || kind == LayerKind::pooling || kind == LayerKind::batch_norm;
}

// Matrix products whose executors hold a part of the weights (tensor_part.hpp).
bool splits_weights(const Layer& layer) {
  switch (layer.kind) {
    case LayerKind::projection:
      return std::get<ProjectionParams>(layer.params).sampled == 0;
    case LayerKind::fully_connected:
      return true;
    case LayerKind::convolution:
      return std::get<ConvolutionParams>(layer.params).groups == 1;
    default:
      return false;
  }
}

bool runs_split(const ResolvedLayer& layer, TensorSplit split) {
  const auto kind = layer.layer.kind;
  switch (split) {
    case TensorSplit::replicated:
      return true;
    case TensorSplit::follows:
      return runs_on_channels_held(kind);
    case TensorSplit::column:
    case TensorSplit::row:
      return splits_weights(layer.layer);
    case TensorSplit::heads:
      return kind == LayerKind::self_attention;
    case TensorSplit::vocabulary:
      return kind == LayerKind::embedding || kind == LayerKind::softmax_cross_entropy;
  }
  return false;
}

}  // namespace

std::optional<std::string> unsupported_tensor_split(const ModelGraph& model, const ShardPlan& plan,
                                                    bool on_gpu) {
  const auto parts = plan.config.tensor;
  if (parts <= 1) return std::nullopt;
  const std::string skipped = "; the simulator predicts it";
  if (on_gpu) {
    return "tensor parallelism (parallelism.tensor > 1) is run by the real backend on CPU ranks "
           "only, not yet on GPU ranks" +
           skipped;
  }
  if (plan.config.spatial_parts() > 1) {
    return "tensor parallelism with spatial splits is not yet run by the real backend" + skipped;
  }
  for (std::size_t i = 0; i < model.layers().size(); ++i) {
    const auto& layer = model.layers()[i];
    const auto& split = plan.layers.at(i).tensor;
    const std::string named =
        "layer '" + layer.layer.name + "' (" + to_string(layer.layer.kind) + ", ";
    if (!runs_split(layer, split.split)) {
      return named + to_string(split.split) + " over " + std::to_string(parts) +
             " GPUs): not yet run by the real backend (it runs projections, fully connected "
             "layers and ungrouped convolutions by column and row, attention by heads, "
             "embeddings and losses by vocabulary, and activations, sums, "
             "pooling and batch-norm on the channels held)" +
             skipped;
    }
  }
  return std::nullopt;
}

}  // namespace tessera::kernels::real
