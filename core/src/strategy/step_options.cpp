// The step program's vocabulary as text, and the options a scenario gives its programs.
#include "tessera/core/strategy/step_program.hpp"

namespace tessera {

std::string to_string(OpCategory category) {
  switch (category) {
    case OpCategory::compute:
      return "compute";
    case OpCategory::halo:
      return "halo";
    case OpCategory::allreduce:
      return "allreduce";
    case OpCategory::other_communication:
      return "other_comm";
    case OpCategory::io:
      return "io";
    case OpCategory::offload:
      return "offload";
  }
  return "compute";
}

std::string to_string(StepOpKind kind) {
  static const char* const names[] = {"compute",
                                      "halo_start",
                                      "halo_wait",
                                      "group_allreduce",
                                      "group_alltoall",
                                      "group_allgather",
                                      "stage_send",
                                      "stage_recv",
                                      "gradient_allreduce",
                                      "gradient_reduce_scatter",
                                      "gradient_wait",
                                      "read_start",
                                      "read_wait",
                                      "update",
                                      "allocate",
                                      "release",
                                      "offload_start",
                                      "offload_wait",
                                      "prefetch_start",
                                      "prefetch_wait"};
  return names[static_cast<int>(kind)];
}

MicroBatchingSection micro_batching_under(const Scenario& scenario,
                                          const OffloadDecision& offload) {
  auto settings = scenario.micro_batching;
  if (offload.memory_optimal_algorithms) settings.workspace_limit_bytes = 0;
  return settings;
}

StepOptions step_options_of(const Scenario& scenario, bool overlaps_communication,
                            InputSource input_source, const OffloadDecision& offload) {
  return {.dtype = scenario.model.dtype,
          .optimizer = scenario.model.optimizer,
          .gradient_bucket_bytes = scenario.sim.gradient_bucket_bytes,
          .input_source = input_source,
          .prefetch = scenario.io.prefetch,
          .read_sub_volume = scenario.io.read_sub_volume,
          .stored_dtype = scenario.io.stored_dtype,
          .overlap_gradient_allreduce = overlaps_communication,
          .overlap_memory_copies = overlaps_communication,
          .batch_norm_over_replicas =
              scenario.parallelism.batch_norm_statistics == BatchNormStatistics::global,
          .offload = offload,
          .allocation = scenario.memory.allocation,
          .workspace_bytes = micro_batching_under(scenario, offload).workspace_limit_bytes,
          .shard = scenario.memory.shard,
          .recompute = scenario.memory.recompute};
}

}  // namespace tessera
