#pragma once
// How a data-parallel worker's layers are placed on its model-parallel GPUs (stages): contiguous
// stages of about equal work (each layer's time where given, its forward FLOPs otherwise),
// contiguous stages starting at named layers, or an explicit
// layer-to-stage map, where the branches of a module may sit on different GPUs and a layer not
// named goes where its first input is.
#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/model/model_graph.hpp"

namespace tessera {

struct StagePlacement {
  StagePlacement() = default;
  // Contiguous stages starting at these layers (the first layer of stages 2..degree).
  StagePlacement(std::vector<std::string> starts) : stage_starts(std::move(starts)) {}
  StagePlacement(std::initializer_list<std::string> starts) : stage_starts(starts) {}
  // An explicit placement: layer name -> stage (0-based).
  static StagePlacement of_layers(std::vector<std::pair<std::string, std::int64_t>> layers) {
    StagePlacement placement;
    placement.layers = std::move(layers);
    return placement;
  }

  std::vector<std::string> stage_starts;
  std::vector<std::pair<std::string, std::int64_t>> layers;  // non-empty: explicit
  // Each layer's time (model order) that contiguous stages balance when no starts are named
  // (stage_balance.hpp); empty: each layer's forward FLOPs.
  std::vector<double> layer_seconds;
};

// The stage of every layer. Throws StrategyError naming the scenario key
// (parallelism.model.stages or parallelism.model.placement) for names the model lacks, stages
// out of range, a stage holding no layer, or starts out of the layers' order.
std::vector<int> assign_stages(const ModelGraph& model, std::int64_t degree,
                               const StagePlacement& placement);

// Whether every layer's inputs sit on its stage or an earlier one: a pipeline whose stages pass
// activations one way (what a one-forward-one-backward schedule needs).
bool stages_form_a_pipeline(const ModelGraph& model, const std::vector<int>& stages);

}  // namespace tessera
