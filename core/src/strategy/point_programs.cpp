#include "tessera/core/point_programs.hpp"

#include "tessera/core/memory_estimate.hpp"

namespace tessera {

PointPrograms point_programs(const LoadedScenario& loaded, const SweepPoint& point,
                             const ProfileDatabase* profiles, Epoch epoch) {
  // The same steps as simulate_point (simulator/src/simulate_point.cpp), in the same order.
  const auto& s = loaded.scenario;
  const auto memory_inputs = memory_inputs_of(s, loaded.device_capacity_bytes);
  PointPrograms result;
  result.offload = decide_offload(loaded.model, point.plan, memory_inputs);
  const ComputeCostModel costs(roofline_of(loaded.cluster.gpu), profiles,
                               micro_batching_under(s, result.offload));
  const auto input = plan_input(loaded, point.config.gpus());
  const auto options = step_options_of(s, loaded.cluster.gpu.overlaps_communication,
                                       input.of(epoch), result.offload);
  result.programs = build_step_programs(loaded.model, point.plan, costs, options);
  return result;
}

}  // namespace tessera
