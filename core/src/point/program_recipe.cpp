#include "tessera/core/point/program_recipe.hpp"

#include <utility>

#include "tessera/core/point/point_input.hpp"
#include "tessera/core/strategy/memory_estimate.hpp"

namespace tessera {

ComputeCostModel ProgramRecipe::costs(DeviceRoofline device,
                                      const ProfileDatabase* profiles) const {
  return ComputeCostModel(std::move(device), profiles, micro_batching_under(*scenario, offload));
}

StepOptions ProgramRecipe::step_options() const {
  return step_options_of(*scenario, overlaps_communication, input_source, offload);
}

std::vector<StepProgram> ProgramRecipe::build(const ModelGraph& model, const ShardPlan& plan,
                                              DeviceRoofline device,
                                              const ProfileDatabase* profiles) const {
  return build_step_programs(model, plan, costs(std::move(device), profiles), step_options());
}

std::vector<StepProgram> ProgramRecipe::build(const ModelGraph& model, const ShardPlan& plan,
                                              const ComputeCostModel& costs,
                                              const NetworkMicroBatchPlan& micro_batching) const {
  return build_step_programs(model, plan, costs, step_options(), micro_batching);
}

ProgramRecipe point_recipe(const LoadedScenario& loaded, const SweepPoint& point, Epoch epoch) {
  const auto& s = loaded.scenario;
  return {.scenario = &s,
          .offload = decide_offload(loaded.model, point.plan,
                                    memory_inputs_of(s, loaded.device_capacity_bytes)),
          .input_source = plan_input(loaded, point.config.gpus()).of(epoch),
          .overlaps_communication = loaded.cluster.gpu.overlaps_communication};
}

}  // namespace tessera
