#include "offload_table.hpp"

#include "tessera/core/cost_model.hpp"
#include "tessera/core/memory_estimate.hpp"
#include "tessera/core/quantity.hpp"
#include "tessera/core/step_program.hpp"
#include "tessera/core/text_table.hpp"
#include "tessera/core/timeline.hpp"

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
                   "to host per step", "layers offloaded", "fits"},
                  {TextTable::Align::left, TextTable::Align::left});
  for (auto policy :
       {OffloadPolicy::none, OffloadPolicy::conv, OffloadPolicy::all, OffloadPolicy::dyn}) {
    auto inputs = memory_inputs_of(s, loaded.device_capacity_bytes);
    inputs.offload = policy;
    const auto memory = estimate_memory(loaded.model, point.plan, inputs);
    const ComputeCostModel costs(roofline_of(loaded.cluster.gpu), profiles,
                                 micro_batching_under(s, memory.offload));
    const auto programs =
        build_step_programs(loaded.model, point.plan, costs,
                            step_options_of(s, true, InputSource::none, memory.offload));
    const auto& program = programs.at(static_cast<std::size_t>(memory.worst_stage));
    const auto timeline = serial_memory_timeline(program);
    const auto maps = serial_memory_timeline(program, holds_feature_maps);
    table.add_row({to_string(policy),
                   to_string(memory.offload.policy) +
                       (memory.offload.memory_optimal_algorithms ? ", no workspace" : ""),
                   format_bytes(memory.total_bytes), format_bytes(timeline.average_bytes()),
                   format_bytes(maps.average_bytes()), format_bytes(memory.offloaded_bytes),
                   layer_list(memory.offloaded_layers), memory.fits ? "yes" : "NO"});
  }
  return "\nOffloading feature maps to host memory (vDNN) at point " + std::to_string(point.index) +
         ", busiest GPU of " + format_bytes(loaded.device_capacity_bytes) +
         " (average: over the step's compute played one kernel after another, no copy or "
         "communication time; `tessera run` simulates them; feature maps: layer outputs, their "
         "gradients and what layers keep for backward, what vDNN moves)\n" +
         table.render();
}

}  // namespace tessera
