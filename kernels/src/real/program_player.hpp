#pragma once
// Plays one rank's step program for real, op by op, in the program's order: compute ops run the
// layer's executor (its pass, its part), halo ops its exchange, group ops the batch-norm sums and
// the redistribution, gradient ops the parameter buckets, read ops the input source, update the
// optimizer. Nothing here decides what runs; every op is timed into the step's breakdown (the
// time the rank spent blocked in it: exposed time, as the simulator reports it) and timeline.
#include <chrono>
#include <vector>

#include "execution_context.hpp"
#include "rank_tensors.hpp"
#include "tessera/core/step_program.hpp"
#include "tessera/kernels/real/step_input_source.hpp"
#include "tessera/kernels/real/trainer.hpp"

namespace tessera::kernels::real {

class ProgramPlayer {
 public:
  ProgramPlayer(const StepProgram& program, RankTensors& tensors, ExecutionContext& context,
                float learning_rate);
  StepReport play(StepInputSource& source);

 private:
  using Clock = std::chrono::steady_clock;

  void load_input(const StepInput& input);
  void run(std::size_t index, StepInputSource& source, StepReport& report);
  void redistribute(const StepOp& op);
  double since_step_start(Clock::time_point when) const;

  const StepProgram& program_;
  RankTensors& tensors_;
  ExecutionContext& context_;
  float learning_rate_;
  int rank_ = 0;                               // in the run, for the timeline
  bool reads_ = false;                         // the program reads samples (not synthetic)
  bool prefetches_ = false;                    // its read completes after the step's compute
  bool input_loaded_ = false;                  // the next step's input is on the device
  std::vector<bool> begins_pass_, ends_pass_;  // per op: first / last of its layer's pass
  Clock::time_point step_start_;
  std::vector<double> bucket_posted_;  // seconds from the step's start, per bucket
  double read_started_ = 0;
  double copies_started_ = -1;  // seconds from the step's start of the first unwaited copy
};

}  // namespace tessera::kernels::real
