#pragma once
// Executors of the sliding-window layers: convolutions and pooling, partitioned over the spatial
// group where the layer is split, plain kernels otherwise.
#include "layer_executor.hpp"

namespace tessera::kernels::real {

std::unique_ptr<LayerExecutor> make_convolution_executor(const ResolvedLayer& layer,
                                                         std::size_t index, bool spatially_split,
                                                         const LocalShapes& shapes,
                                                         const StepProgram& program,
                                                         ExecutionContext& context);
std::unique_ptr<LayerExecutor> make_pooling_executor(const ResolvedLayer& layer,
                                                     bool spatially_split,
                                                     const LocalShapes& shapes,
                                                     ExecutionContext& context);

}  // namespace tessera::kernels::real
