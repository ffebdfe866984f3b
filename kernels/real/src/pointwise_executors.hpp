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

LayerExecutorFactory make_layer_norm_executor;  // layer_norm_executor.cpp
LayerExecutorFactory make_gelu_executor;        // gelu_executor.cpp

}  // namespace tessera::kernels::real
