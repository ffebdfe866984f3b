#include "tessera/core/strategy/stage_placement.hpp"

#include <algorithm>
#include <numeric>

#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"

namespace tessera {
namespace {

std::vector<int> contiguous_stages(const ModelGraph& model, std::int64_t degree,
                                   const std::vector<std::string>& stage_starts,
                                   const std::vector<double>& layer_seconds) {
  const auto& layers = model.layers();
  std::vector<std::size_t> starts;
  if (!stage_starts.empty()) {
    if (static_cast<std::int64_t>(stage_starts.size()) != degree - 1) {
      throw StrategyError(
          "parallelism.model.stages",
          "expected " + std::to_string(degree - 1) + " layer names (the first layer of stages 2.." +
              std::to_string(degree) + "), got " + std::to_string(stage_starts.size()));
    }
    for (const auto& name : stage_starts) {
      auto index = model.index_of(name);
      if (!index || *index == 0) {
        throw StrategyError(
            "parallelism.model.stages",
            "expected names of non-input layers of model " + model.name() + ", got '" + name + "'");
      }
      if (!starts.empty() && *index <= starts.back()) {
        throw StrategyError("parallelism.model.stages",
                            "stage starts must follow the model's layer order; '" + name +
                                "' comes before or at the previous one");
      }
      starts.push_back(*index);
    }
  } else {
    // Contiguous stages with about equal work: each layer's time, or its forward FLOPs (+1 so
    // that free layers still count).
    std::vector<double> work(layers.size());
    const bool timed = layer_seconds.size() == layers.size();
    for (std::size_t i = 0; i < layers.size(); ++i) {
      work[i] =
          timed ? layer_seconds[i] : layer_cost(layers[i], 1, DType::float32).flops.forward + 1.0;
    }
    const double total = std::accumulate(work.begin(), work.end(), 0.0);
    double cumulative = 0;
    for (std::size_t i = 0;
         i < layers.size() && static_cast<std::int64_t>(starts.size()) < degree - 1; ++i) {
      const double target =
          total * static_cast<double>(starts.size() + 1) / static_cast<double>(degree);
      const std::size_t remaining_layers = layers.size() - i;
      const std::size_t stages_left = static_cast<std::size_t>(degree - 1) - starts.size();
      if (i > 0 && (cumulative >= target || remaining_layers <= stages_left)) starts.push_back(i);
      cumulative += work[i];
    }
  }
  std::vector<int> stage(layers.size(), 0);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    stage[i] = static_cast<int>(
        std::count_if(starts.begin(), starts.end(), [&](std::size_t s) { return s <= i; }));
  }
  return stage;
}

std::vector<int> explicit_stages(const ModelGraph& model, std::int64_t degree,
                                 const std::vector<std::pair<std::string, std::int64_t>>& named) {
  const auto& layers = model.layers();
  std::vector<int> stage(layers.size(), -1);
  for (const auto& [name, index] : named) {
    const auto layer = model.index_of(name);
    if (!layer) {
      throw StrategyError("parallelism.model.placement",
                          "model " + model.name() + " has no layer '" + name + "'");
    }
    if (index < 0 || index >= degree) {
      throw StrategyError("parallelism.model.placement",
                          "layer '" + name + "': expected a stage in 0.." +
                              std::to_string(degree - 1) + ", got " + std::to_string(index));
    }
    stage[*layer] = static_cast<int>(index);
  }
  // A layer not named goes where its first input is (the samples on stage 0).
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (stage[i] >= 0) continue;
    stage[i] = layers[i].input_indices.empty() ? 0 : stage[layers[i].input_indices.front()];
  }
  for (std::int64_t s = 0; s < degree; ++s) {
    if (std::find(stage.begin(), stage.end(), static_cast<int>(s)) == stage.end()) {
      throw StrategyError("parallelism.model.placement",
                          "stage " + std::to_string(s) +
                              " holds no layer; expected every one of "
                              "the " +
                              std::to_string(degree) + " stages to hold some");
    }
  }
  return stage;
}

}  // namespace

std::vector<int> assign_stages(const ModelGraph& model, std::int64_t degree,
                               const StagePlacement& placement) {
  const auto& layers = model.layers();
  if (degree == 1) {
    if (!placement.stage_starts.empty()) {
      throw StrategyError("parallelism.model.stages", "stages need a model degree above 1");
    }
    if (!placement.layers.empty()) {
      throw StrategyError("parallelism.model.placement",
                          "a placement needs a model degree above 1");
    }
    return std::vector<int>(layers.size(), 0);
  }
  if (static_cast<std::size_t>(degree) > layers.size() - 1) {
    throw StrategyError("parallelism.model.degree",
                        "expected at most " + std::to_string(layers.size() - 1) +
                            " stages (one layer each) for model " + model.name() + ", got " +
                            std::to_string(degree));
  }
  if (!placement.layers.empty()) return explicit_stages(model, degree, placement.layers);
  return contiguous_stages(model, degree, placement.stage_starts, placement.layer_seconds);
}

bool stages_form_a_pipeline(const ModelGraph& model, const std::vector<int>& stages) {
  const auto& layers = model.layers();
  for (std::size_t i = 0; i < layers.size(); ++i) {
    for (auto producer : layers[i].input_indices) {
      if (stages[producer] > stages[i]) return false;
    }
  }
  return true;
}

}  // namespace tessera
