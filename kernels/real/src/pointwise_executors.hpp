#pragma once
// Executors of every layer that is not a sliding window: activations, dropout, batch-norm, add,
// concat, fully connected and the losses.
#include "layer_executor.hpp"

namespace tessera::kernels::real {

// Layer `index` of `model`.
std::unique_ptr<LayerExecutor> make_pointwise_executor(const ModelGraph& model, std::size_t index,
                                                       bool spatially_split,
                                                       const LocalShapes& shapes,
                                                       const StepProgram& program,
                                                       ExecutionContext& context);

LayerExecutorFactory make_layer_norm_executor;           // layer_norm_executor.cpp
LayerExecutorFactory make_gelu_executor;                 // gelu_executor.cpp
LayerExecutorFactory make_split_cross_entropy_executor;  // split_cross_entropy_executor.cpp

// What a loss layer's value and gradient are scaled by, so that the sum over every rank of the
// run is the global batch's mean (pointwise_executors.cpp says how).
double loss_scale(const LocalShapes& shapes, std::int64_t positions_per_sample,
                  const ExecutionContext& context);

}  // namespace tessera::kernels::real
