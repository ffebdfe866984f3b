#pragma once
// The step programs of one sweep point as the simulator plays them: timed by the cost model
// (profiles, else the cluster GPU's roofline), under the offload policy the memory plan applies
// (dyn resolved), reading samples as the input plan says for `epoch`. `tessera plan` bounds
// candidates with them and `tessera export --chakra` writes them out.
#include <vector>

#include "tessera/core/input_source.hpp"
#include "tessera/core/memory_plan.hpp"
#include "tessera/core/profile_database.hpp"
#include "tessera/core/scenario_loader.hpp"
#include "tessera/core/step_program.hpp"

namespace tessera {

struct PointPrograms {
  std::vector<StepProgram> programs;  // one per model-parallel stage
  OffloadDecision offload;            // the policy applied
};

// `profiles` may be null.
PointPrograms point_programs(const LoadedScenario& scenario, const SweepPoint& point,
                             const ProfileDatabase* profiles, Epoch epoch = Epoch::later);

}  // namespace tessera
