#pragma once
// The S4U actors that play one training step: per GPU a compute actor running its stage's step
// program, a communication-stream actor running its gradient all-reduces in order (as an NCCL
// stream does); input reads go through the node's InputPipeline.
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "input_pipeline.hpp"
#include "tessera/core/result/timeline.hpp"
#include "tessera/core/strategy/rank_numbering.hpp"
#include "tessera/core/strategy/step_program.hpp"
#include "tessera/simulator/collectives/collectives.hpp"
#include "tessera/simulator/fabric.hpp"
#include "tessera/simulator/platform/platform.hpp"

namespace tessera::sim {

// Where one GPU's step time went, and its device memory over the step.
struct GpuTimes {
  double seconds[6] = {0, 0, 0, 0, 0, 0};  // by OpCategory
  double end_seconds = 0;
  bool finished = false;  // played its program to the end (not stuck waiting for a partner)
  MemoryTimeline memory;
};

struct PlaySettings {
  bool automatic_allreduce = true;
  AllreduceAlgorithm allreduce = AllreduceAlgorithm::ring;
  Granularity granularity = Granularity::aggregated;
  // Symmetric simulation: each played replica stands for this many (see symmetric_reduction.hpp).
  int replicas = 1;
  // The data store's draw of which nodes hold the step's samples (sample_holders.hpp).
  std::uint64_t store_draw = 0;
  // A read's bytes are the files' (io.stored_dtype); the host converts them to the model's dtype
  // before the copy to the GPU, which moves this many bytes per byte read.
  double copied_bytes_per_read_byte = 1;
  // All-reduces measured on the machine (null: every all-reduce is played over the links).
  const MeasuredAllreduce* measured_allreduce = nullptr;
  std::set<int> traced_gpus;
  // Per played rank (empty: 0 and 1 for every rank): which of the player's program sets it plays
  // (one per node group: each GPU type has its own kernel times), and the factor its compute is
  // stretched by (1 / clock fraction of a straggler GPU).
  std::vector<int> program_set_of_rank;
  std::vector<double> compute_stretch_of_rank;
};

class StepPlayer {
 public:
  // `program_sets`: at least one set of one program per stage (PlaySettings says who plays which).
  StepPlayer(const SimPlatform& platform, const Fabric& fabric, const RankNumbering& layout,
             const std::vector<std::vector<StepProgram>>& program_sets, PlaySettings settings);
  ~StepPlayer();

  // Creates every actor; run the engine afterwards.
  void spawn();

  const std::vector<GpuTimes>& times() const { return times_; }
  // After the engine ran: throws when a GPU did not reach the end of its program (the programs
  // deadlocked: it waits for a message no other GPU sends), as there is then no step to report.
  void check_finished() const;
  const std::vector<TimelineEvent>& events() const { return events_; }
  // Whether the platform could play the programs' reads (see InputPipeline::can_play).
  bool reads_played() const { return inputs_->can_play(); }
  // Whether it could play copies between GPUs and host memory (vDNN): it needs node CPU hosts.
  bool host_copies_played() const { return !platform_.node_hosts.empty(); }
  // The device memory in use over the step of the traced GPUs.
  std::vector<MemorySample> memory_samples() const;
  // What `sim.allreduce: auto` played, for the result's note ("4.49 MiB over 128 GPUs: tree,
  // ..."), smallest first; empty when the scenario names the algorithm or nothing was chosen.
  std::string automatic_allreduce_choices() const;

 private:
  struct Streams;

  void play_gpu(int rank);
  void play_communication_stream(int rank, int buckets);
  void record(int rank, int track, const std::string& name, OpCategory category, double start);
  AllreduceAlgorithm algorithm_for(const CollectiveContext& context, const MemberGroup& members,
                                   double bytes);

  const SimPlatform& platform_;
  const Fabric& fabric_;
  const RankNumbering& layout_;
  const StepProgram& program_of(int rank) const;
  double compute_stretch_of(int rank) const;

  const std::vector<std::vector<StepProgram>>& program_sets_;
  PlaySettings settings_;
  // The GPUs summing gradients: by stage, then tensor shard.
  const MemberGroup& stage_group_of(int rank) const;
  std::vector<std::unique_ptr<MemberGroup>> stage_groups_;
  std::vector<std::unique_ptr<Streams>> streams_;
  std::unique_ptr<InputPipeline> inputs_;
  std::vector<GpuTimes> times_;
  std::vector<TimelineEvent> events_;
  // Every member of a group asks for the same choice: predict once per (group, size, channel).
  std::map<std::tuple<std::uint64_t, double, int>, AllreduceAlgorithm> chosen_;
  // The distinct choices: bytes, GPUs in the group (with the replicas it stands for), algorithm.
  std::set<std::tuple<double, int, AllreduceAlgorithm>> choices_;
};

}  // namespace tessera::sim
