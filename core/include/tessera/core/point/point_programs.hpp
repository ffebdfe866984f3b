#pragma once
// The step programs of one sweep point as the simulator plays them (point_recipe, timed by the
// cost model: profiles, else the cluster GPU's roofline), reading samples as the input plan says
// for `epoch`, one program per stage; which one each GPU plays, and how fast, is
// rank_programs.hpp's.
#include <cstdint>
#include <vector>

#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/point/program_recipe.hpp"
#include "tessera/core/strategy/data_split.hpp"
#include "tessera/core/strategy/input_source.hpp"
#include "tessera/core/strategy/memory_estimate.hpp"
#include "tessera/core/strategy/memory_plan.hpp"
#include "tessera/core/strategy/step_program.hpp"

namespace tessera {

struct PointPrograms {
  std::vector<StepProgram> programs;  // one per model-parallel stage
  OffloadDecision offload;            // the policy applied
};

// `profiles` may be null.
PointPrograms point_programs(const LoadedScenario& scenario, const SweepPoint& point,
                             const ProfileDatabase* profiles, Epoch epoch = Epoch::later);

// `plan` at `mini_batch` samples per replica (the plan itself at its own mini-batch). Pure data
// parallelism keeps its meaning; stages are placed anew (data_split: proportional, the one user,
// allows no model split).
ShardPlan plan_at_mini_batch(const LoadedScenario& scenario, const ShardPlan& plan,
                             std::int64_t mini_batch);

// Each GPU type's programs of `plan` at a mini-batch by `recipe`, timed by `profiles` (may be null)
// where they hold rows of that GPU's model, by its roofline elsewhere: a mixed cluster's profiles
// are the files of each of its GPU models, loaded together.
ProgramBuilder program_builder(const LoadedScenario& scenario, const ShardPlan& plan,
                               const ProfileDatabase* profiles, const ProgramRecipe& recipe);

// The memory estimate of the GPU of `point` that fits worst (memory_estimate.hpp): every GPU
// model of the cluster at every batch it trains (`batches`, rank order, as
// point_batches_of_ranks gives them; empty: the mini-batch each), against its own memory, or
// memory.device_capacity where the scenario gives one. On a uniform cluster with equal shares,
// the point's one estimate.
MemoryEstimate point_memory(const LoadedScenario& scenario, const SweepPoint& point,
                            const std::vector<std::int64_t>& batches);

// The samples each GPU of `point` trains per step (rank order), as both backends share the global
// batch: parallelism.data_split over the cluster's GPUs (data_split.hpp), their speeds from the
// programs point_programs times.
std::vector<std::int64_t> point_batches_of_ranks(const LoadedScenario& scenario,
                                                 const SweepPoint& point,
                                                 const ProfileDatabase* profiles);

}  // namespace tessera
