#include "offload_table.hpp"

#include <cstdio>
#include <optional>

#include "tessera/core/common/quantity.hpp"
#include "tessera/core/common/text_table.hpp"
#include "tessera/core/cost/cost_model.hpp"
#include "tessera/core/point/program_recipe.hpp"
#include "tessera/core/result/timeline.hpp"
#include "tessera/core/strategy/memory_estimate.hpp"
#include "tessera/core/strategy/step_program.hpp"

namespace tessera {
namespace {

std::string layer_list(const std::vector<std::string>& names) {
  if (names.empty()) return "-";
  constexpr std::size_t kShown = 4;
  std::string text = std::to_string(names.size()) + ": ";
  for (std::size_t i = 0; i < names.size() && i < kShown; ++i) {
    text += (i == 0 ? "" : ", ") + names[i];
  }
  return text + (names.size() > kShown ? ", ..." : "");
}

}  // namespace

bool shows_offloading(const LoadedScenario& loaded) {
  if (loaded.scenario.memory.offload != OffloadPolicy::none) return true;
  for (const auto& point : loaded.points) {
    const auto memory = estimate_memory(
        loaded.model, point.plan, memory_inputs_of(loaded.scenario, loaded.device_capacity_bytes));
    if (!memory.fits) return true;
  }
  return false;
}

std::string offload_table(const LoadedScenario& loaded, const SweepPoint& point,
                          const ProfileDatabase* profiles) {
  const auto& s = loaded.scenario;
  TextTable table({"offload", "applied", "peak/GPU", "average/GPU", "feature maps, average",
                   "maps saved", "to host per step", "layers offloaded", "fits"},
                  {TextTable::Align::left, TextTable::Align::left});
  // The step each variant plays, one kernel after another: the memory plan's peak, and the time
  // averages of everything and of the feature maps alone.
  struct Played {
    MemoryEstimate memory;
    double average_bytes = 0;
    double maps_average_bytes = 0;
  };
  const auto play = [&](const Scenario& variant) {
    const auto memory = estimate_memory(loaded.model, point.plan,
                                        memory_inputs_of(variant, loaded.device_capacity_bytes));
    const ProgramRecipe recipe{.scenario = &variant, .offload = memory.offload};
    const auto programs =
        recipe.build(loaded.model, point.plan, roofline_of(loaded.cluster.gpu), profiles);
    const auto& program = programs.at(static_cast<std::size_t>(memory.worst_stage));
    return Played{memory, serial_memory_timeline(program).average_bytes(),
                  serial_memory_timeline(program, holds_feature_maps).average_bytes()};
  };
  // vDNN's baseline, every tensor held for the whole step: what its "average memory saved"
  // figures compare with.
  std::optional<double> baseline_maps_bytes;
  const auto saved = [&](double maps_bytes) {
    if (!baseline_maps_bytes || *baseline_maps_bytes <= 0) return std::string("-");
    char text[32];
    std::snprintf(text, sizeof text, "%.1f%%", 100 * (1 - maps_bytes / *baseline_maps_bytes));
    return std::string(text);
  };
  const auto add_row = [&](const std::string& offload, const Played& played) {
    const auto& memory = played.memory;
    table.add_row({offload,
                   to_string(memory.offload.policy) +
                       (memory.offload.memory_optimal_algorithms ? ", no workspace" : ""),
                   format_bytes(memory.total_bytes), format_bytes(played.average_bytes),
                   format_bytes(played.maps_average_bytes), saved(played.maps_average_bytes),
                   format_bytes(memory.offloaded_bytes), layer_list(memory.offloaded_layers),
                   memory.fits ? "yes" : "NO"});
  };
  if (s.memory.allocation == MemoryAllocation::layer_wise) {
    Scenario network_wide = s;
    network_wide.memory.allocation = MemoryAllocation::network_wide;
    network_wide.memory.offload = OffloadPolicy::none;
    const auto baseline = play(network_wide);
    add_row("none, network-wide", baseline);
    baseline_maps_bytes = baseline.maps_average_bytes;
  }
  for (auto policy :
       {OffloadPolicy::none, OffloadPolicy::conv, OffloadPolicy::all, OffloadPolicy::dyn}) {
    Scenario variant = s;
    variant.memory.offload = policy;
    add_row(to_string(policy), play(variant));
  }
  return "\nOffloading feature maps to host memory (vDNN) at point " + std::to_string(point.index) +
         ", busiest GPU of " + format_bytes(loaded.device_capacity_bytes) +
         " (averages: over the step's compute played one kernel after another, no copy or "
         "communication time; `tessera run` simulates them; feature maps: layer outputs, their "
         "gradients and what layers keep for backward, what vDNN moves; maps saved: their average "
         "against network-wide allocation's, the vDNN paper's figure)\n" +
         table.render();
}

}  // namespace tessera
