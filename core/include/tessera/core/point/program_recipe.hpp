#pragma once
// The one recipe by which a point's step programs are built, for every user of them (the
// simulator, the real backend, tessera plan's screen, describe's offload table, the Chakra export):
// the offload policy the memory plan applies, kernels timed by the cost model under the
// micro-batching settings that policy leaves, samples read as the input plan says, then
// build_step_programs. A variant (a plan candidate's scenario, an offload policy tried by the real
// backend) is a recipe with other fields.
#include <vector>

#include "tessera/core/cost/cost_model.hpp"
#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/micro_batching/network_micro_batch_plan.hpp"
#include "tessera/core/scenario/scenario.hpp"
#include "tessera/core/strategy/input_source.hpp"
#include "tessera/core/strategy/memory_plan.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"
#include "tessera/core/strategy/step_program.hpp"

namespace tessera {

struct ProgramRecipe {
  const Scenario* scenario = nullptr;  // the sections that shape the programs; must outlive it
  OffloadDecision offload;             // the policy applied (decide_offload, dyn resolved)
  InputSource input_source = InputSource::none;
  bool overlaps_communication = true;  // the device all-reduces beside compute (a GPU)

  // The cost model of `device` under the micro-batching settings the offload decision leaves.
  ComputeCostModel costs(DeviceRoofline device, const ProfileDatabase* profiles) const;
  StepOptions step_options() const;
  // One program per stage, convolutions timed by the micro-batching plan made from `profiles`
  // (may be null), or by `micro_batching` where given (the real backend's, from its device).
  std::vector<StepProgram> build(const ModelGraph& model, const ShardPlan& plan,
                                 DeviceRoofline device, const ProfileDatabase* profiles) const;
  std::vector<StepProgram> build(const ModelGraph& model, const ShardPlan& plan,
                                 const ComputeCostModel& costs,
                                 const NetworkMicroBatchPlan& micro_batching) const;
};

// A sweep point's recipe as the simulator plays it: the memory plan's offload decision against
// the scenario's device capacity, the input plan's source for `epoch`, the cluster GPU's overlap.
ProgramRecipe point_recipe(const LoadedScenario& loaded, const SweepPoint& point, Epoch epoch);

}  // namespace tessera
