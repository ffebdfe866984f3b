#pragma once
// Executors of the recurrent models' layers (lstm, embedding, attention, projection) on a
// device with SequenceKernels (the CPU; a GPU rank skips recurrent models, real_point.cpp).
// Sequences are N x C x T and run whole on their rank: spatial parallelism never splits them.
#include <optional>
#include <string>

#include "layer_executor.hpp"
#include "shared_table.hpp"
#include "tessera/kernels/sequence_kernels.hpp"

namespace tessera::kernels::real {

// Throws std::invalid_argument naming the layer where the device has no sequence kernels, the
// layer is split over the spatial group, or the real backend cannot run its variant yet.
std::unique_ptr<LayerExecutor> make_sequence_executor(const ModelGraph& model, std::size_t index,
                                                      bool spatially_split,
                                                      const LocalShapes& shapes,
                                                      const StepProgram& program,
                                                      ExecutionContext& context);

LayerExecutorFactory make_lstm_executor;
LayerExecutorFactory make_attention_executor;
LayerExecutorFactory make_self_attention_executor;
LayerExecutorFactory make_position_embedding_executor;
ModelExecutorFactory make_embedding_executor;
ModelExecutorFactory make_projection_executor;

// Why the real backend cannot run `model` with sharded weights (memory.shard: weights over
// several ranks), which it gathers one layer at a time into one buffer: a head tied to an
// embedding's table with a bias of its own (BERT's decoder) reads two layers' parameters at once.
// None where it can.
std::optional<std::string> unsupported_weight_sharding(const ModelGraph& model);

// Whether layer `index` takes its input from a sampled softmax's projection, whose channel 0 is
// every position's target (a cross-entropy then labels every position 0).
bool scores_target_first(const ModelGraph& model, std::size_t index);

// The device's sequence kernels; throws std::invalid_argument naming `layer` where it has none.
SequenceKernels& sequence_kernels_for(const std::string& layer, ExecutionContext& context);

}  // namespace tessera::kernels::real
