#pragma once
// Which program each GPU plays. A uniform cluster plays one set (one program per stage). Node
// groups each get a set timed on their own GPU; a straggler GPU's compute is stretched by the
// inverse of its clock fraction; with parallelism.data_split: proportional every GPU gets its
// share of the global batch from its speed (data_split.hpp), and a set at that batch.
#include <cstdint>
#include <functional>
#include <vector>

#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/point/program_recipe.hpp"
#include "tessera/core/scenario/cluster_spec.hpp"
#include "tessera/core/strategy/data_split.hpp"
#include "tessera/core/strategy/step_program.hpp"

namespace tessera {

struct RankPrograms {
  std::vector<std::vector<StepProgram>> sets;  // sets[0]: the first group at the mini-batch
  std::vector<int> set_of_rank;                // per played rank; empty: set 0 for all
  std::vector<double> stretch_of_rank;         // per played rank; empty: 1 for all
};

// The programs of the played ranks 0 .. played_gpus-1 of `played` (the cluster as built: the
// full one, or a symmetric reduction's, whose nodes of a group all stand for nodes of the same
// group). `batch_of_played_rank` empty: every rank at `mini_batch`.
RankPrograms plan_rank_programs(const ClusterSpec& played, std::int64_t played_gpus,
                                std::int64_t mini_batch,
                                const std::vector<std::int64_t>& batch_of_played_rank,
                                const ProgramBuilder& build);

// Every GPU's programs of `point` on the scenario's whole cluster, timed by `profiles` (may be
// null) as the simulator times them for `epoch`: what `tessera export --chakra` writes.
RankPrograms point_rank_programs(const LoadedScenario& scenario, const SweepPoint& point,
                                 const ProfileDatabase* profiles, Epoch epoch = Epoch::later);

}  // namespace tessera
