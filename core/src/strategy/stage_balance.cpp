#include "tessera/core/strategy/stage_balance.hpp"

#include <algorithm>

#include "tessera/core/cost/cost_model.hpp"

namespace tessera {

StagePlacement balanced_by_time(StagePlacement placement, const ModelGraph& model,
                                const GpuSpec& gpu, const ParallelConfig& config, DType dtype) {
  if (config.model_degree == 1 || !placement.stage_starts.empty() || !placement.layers.empty()) {
    return placement;
  }
  const std::int64_t batch = config.mini_batch / std::max<std::int64_t>(config.micro_batches, 1);
  const ComputeCostModel costs(roofline_of(gpu), nullptr, MicroBatchingSection{});
  placement.layer_seconds.clear();
  for (const auto& layer : model.layers()) {
    double seconds = 0;
    for (auto direction :
         {Direction::forward, Direction::backward_data, Direction::backward_filter}) {
      seconds += costs
                     .layer_time(layer.layer, layer.input_shapes, layer.output_shape, batch, dtype,
                                 direction)
                     .seconds;
    }
    placement.layer_seconds.push_back(seconds);
  }
  return placement;
}

}  // namespace tessera
