#pragma once
// What `tessera plan` learns about a candidate strategy before simulating it, all of it cheap:
// whether the split is valid for the model (plan_shards), whether its memory plan fits the GPU
// (or the --memory-limit), and a lower bound on its step from the step program alone. The
// simulator is asked only about candidates that pass the first two and whose bound could still
// put them among the best (plan_search.hpp).
#include <functional>
#include <string>
#include <vector>

#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/plan_search/plan_space.hpp"
#include "tessera/core/strategy/step_program.hpp"

namespace tessera {

struct ScreenedCandidate {
  PlanCandidate candidate;
  bool valid = false;
  std::string invalid_reason;    // the strategy error, when not valid
  double peak_memory_bytes = 0;  // the memory plan's peak per GPU (valid candidates)
  double capacity_bytes = 0;     // what it must fit
  bool fits = false;
  // No step of this strategy can be shorter: the compute a GPU does one kernel after another,
  // along the chain of model-parallel stages (step_lower_bound), or with the transfers it waits
  // for (communication_step_bound), whichever is longer.
  double step_lower_bound_seconds = 0;
  OffloadDecision applied_offload;  // the policy its memory plan applies (dyn resolved)
  // Equal for candidates whose simulations are the same (simulation_signature): one simulation
  // serves them all.
  std::string simulation_signature;
};

// The scenario with a candidate's strategy in place of its own parallelism, memory and kernels
// keys, one point and no sweep: what the backends simulate, and what plan writes as the best
// scenario. Throws StrategyError (key, problem) when the split does not fit the model.
LoadedScenario candidate_scenario(const LoadedScenario& base, const PlanStrategy& strategy);

// The same scenario section without copying the model, for screening.
Scenario candidate_scenario_section(const Scenario& base, const PlanStrategy& strategy);

// A GPU memory limit below the device's: every candidate must fit it (--memory-limit).
void apply_memory_limit(LoadedScenario& scenario, double limit_bytes);

// `profiles` may be null (roofline times); it decides kernel times as it does in the simulator.
ScreenedCandidate screen_candidate(const LoadedScenario& base, const PlanCandidate& candidate,
                                   const ProfileDatabase* profiles);

// Every candidate, in order, screened by `threads` threads (the result does not depend on them).
std::vector<ScreenedCandidate> screen_candidates(const LoadedScenario& base,
                                                 const std::vector<PlanCandidate>& candidates,
                                                 const ProfileDatabase* profiles,
                                                 std::size_t threads = 1);

// The least time a message of `bytes` from stage `from_stage` to `to_stage` takes.
using StageTransferSeconds = std::function<double(int from_stage, int to_stage, double bytes)>;

// A lower bound on the step of one GPU playing `programs` (one per model-parallel stage): the
// critical path of compute through the stage transfers. Each program's compute and optimizer
// ops run one after another on the compute stream, and a stage receive waits for the matching
// send (the n-th send from one stage to another for the n-th receive there) and then for its
// transfer, `transfer_seconds` (none: no time). Communication, I/O, copies and waits only add to
// it. It holds as long as a stage receive blocks the compute stream (step_program.hpp), with or
// without micro-batch pipelining.
double step_lower_bound(const std::vector<StepProgram>& programs,
                        const StageTransferSeconds& transfer_seconds = {});

// A digest of everything the simulator plays for a point: the replicas, batch and stages, the
// split axes' parts in order, and every op of every program, with spatial axes numbered by
// their order among the split ones. Two candidates with equal signatures simulate alike (a grid
// of 1x4x8 and one of 4x1x8 on a model whose axes are alike give the same programs but for the
// axes' names); the tests hold the simulator to it.
std::string simulation_signature(const ParallelConfig& config,
                                 const std::vector<StepProgram>& programs);

}  // namespace tessera
