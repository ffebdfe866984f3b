#pragma once
// The default model-parallel placement balances stages by time, not by forward FLOPs alone: a
// layer's forward and both backward passes on the GPU's roofline (memory-bound layers, backward
// passes that cost twice the forward, layers without weights), at a pipeline's micro-batch.
#include <cstdint>

#include "tessera/core/common/dtype.hpp"
#include "tessera/core/model/model_graph.hpp"
#include "tessera/core/scenario/cluster_spec.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"
#include "tessera/core/strategy/stage_placement.hpp"

namespace tessera {

// `placement` of `config`'s stages with each layer's roofline time on `gpu` for one micro-batch
// of `config` in `dtype`, when there are several stages and it names neither stage starts nor
// layers (then contiguous stages balance those times); as it is otherwise.
StagePlacement balanced_by_time(StagePlacement placement, const ModelGraph& model,
                                const GpuSpec& gpu, const ParallelConfig& config, DType dtype);

}  // namespace tessera
