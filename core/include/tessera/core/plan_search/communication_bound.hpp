#pragma once
// A lower bound on a step from the transfers a GPU must wait for, for `tessera plan`'s pruning:
// the compute-only bound (step_lower_bound) leaves every candidate of a large space within reach
// of the best, because what separates them is communication.
//
// Each GPU plays its stage's program one op after another (the simulator's StepPlayer). Walking
// it, compute ops add their time; a halo exchange ends no sooner than its start plus the time its
// flows need, a blocking group collective (all-to-all, all-gather, all-reduce) lasts at least
// the time its own flows need, and a wait for gradient buckets ends no sooner than the
// communication stream, which sums them one after another from when each is queued, can have
// summed them. A GPU's flows all start no sooner than the op that posts them
// (its sends and its receives alike), and a set of flows through one link cannot move faster than
// the link's bandwidth (gpu_route_links, the links inside the nodes), times the network model's
// largest bandwidth factor. An all-reduce member receives at least the whole buffer (every
// element needs some value from another member, whatever the algorithm), an all-gather member
// (p-1)/p of it, through the links its routes from the group end in (a reduce-scatter's too).
// Everything else (latency, the fabric, contention among GPUs, I/O, copies) is left out: it can
// only add. Stage transfers join the compute bound's stage chain (stage_transfer_seconds).
//
// The bound is the largest over a few GPUs of each stage's first replica (its first node and the
// node holding its middle GPU, where interior GPUs have every neighbour): the step waits for
// every GPU, so any subset gives a bound.
#include <string>
#include <vector>

#include "tessera/core/scenario/cluster_spec.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"
#include "tessera/core/strategy/step_program.hpp"

namespace tessera {

struct CommunicationBoundSettings {
  // The network model's largest factor on a link's bandwidth (fastest_bandwidth_factor).
  double bandwidth_factor = 1;
  // Whether an all-reduce may take a measured time instead of flows (a profile's rows): then
  // all-reduces are left out.
  bool allreduce_may_be_measured = false;
};

// The largest factor SimGrid 3.32 applies to a link's bandwidth under `network_model` (CM02,
// LV08 or SMPI, as sim.network_model names them): SMPI's default table exceeds 1 for mid-sized
// messages. Held to the simulator's configuration by a simulator test.
double fastest_bandwidth_factor(const std::string& network_model);

// The least time a message of `bytes` takes from the first replica's first GPU of `from_stage`
// to its peer in `to_stage` (the same spatial position and tensor shard): over the slowest link
// of their route. The stage chain step_lower_bound follows is these GPUs'.
double stage_transfer_seconds(const ParallelConfig& config, const ClusterSpec& cluster,
                              const CommunicationBoundSettings& settings, int from_stage,
                              int to_stage, double bytes);

// `programs`: one per model-parallel stage, as plan_screen builds them for `config`.
double communication_step_bound(const std::vector<StepProgram>& programs,
                                const ParallelConfig& config, const ClusterSpec& cluster,
                                const CommunicationBoundSettings& settings);

}  // namespace tessera
