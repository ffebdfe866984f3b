#pragma once
// Plays one rank's step program for real, op by op, in the program's order: compute ops run the
// layer's executor (its pass, its part), halo ops its exchange, group ops the batch-norm sums and
// the redistribution, gradient ops the parameter buckets, read ops the input source, update the
// optimizer. Nothing here decides what runs; every op is timed into the step's breakdown (the
// time the rank spent blocked in it: exposed time, as the simulator reports it) and timeline.
// Each op works on its micro-batch (a pipeline's): its tensors, its samples and targets.
#include <chrono>
#include <vector>

#include "execution_context.hpp"
#include "rank_tensors.hpp"
#include "stage_transfers.hpp"
#include "tessera/core/strategy/step_program.hpp"
#include "tessera/kernels/real/step_input_source.hpp"
#include "tessera/kernels/real/trainer.hpp"

namespace tessera::kernels::real {

class ProgramPlayer {
 public:
  ProgramPlayer(const StepProgram& program, RankTensors& tensors, ExecutionContext& context,
                float learning_rate);
  StepReport play(StepInputSource& source);
  // From the next step on, copies these layers' outputs to the host as their forward passes end
  // (micro-batches in order), for kept_output_of: the last step's.
  void keep_outputs_of(const std::vector<std::size_t>& layers);
  const std::vector<float>& kept_output_of(std::size_t layer) const;

 private:
  using Clock = std::chrono::steady_clock;

  void load_input(const StepInput& input);
  // Points the losses and dropout at micro-batch k's samples.
  void select_micro_batch(std::int64_t micro_batch);
  void run(std::size_t index, StepInputSource& source, StepReport& report);
  void redistribute(const StepOp& op);
  // Waits for sends still reading a buffer a memory op frees.
  void before_memory_op(const StepOp& op);
  double since_step_start(Clock::time_point when) const;

  const StepProgram& program_;
  RankTensors& tensors_;
  ExecutionContext& context_;
  float learning_rate_;
  StageTransfers transfers_;
  std::vector<float> targets_;             // host: the replica's, for the class labels
  std::int64_t replica_first_sample_ = 0;  // global index of the replica's first, this step
  std::int64_t selected_micro_batch_ = -1;
  int rank_ = 0;               // in the run, for the timeline
  bool reads_ = false;         // the program reads samples (not synthetic)
  bool prefetches_ = false;    // its read completes after the step's compute
  bool input_loaded_ = false;  // the next step's input is on the device
  // Per op: first / last of its layer's pass in its micro-batch.
  std::vector<bool> begins_pass_, ends_pass_;
  Clock::time_point step_start_;
  std::vector<double> bucket_posted_;  // seconds from the step's start, per bucket
  double read_started_ = 0;
  double copies_started_ = -1;  // seconds from the step's start of the first unwaited copy
  std::vector<bool> keeps_;     // per layer: keep_outputs_of named it
  std::vector<std::vector<float>> kept_;  // per layer: its outputs in the last step
};

}  // namespace tessera::kernels::real
