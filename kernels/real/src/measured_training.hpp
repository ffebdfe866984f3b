#pragma once
// Training a point's steps on this rank and keeping the measured step of median duration, with
// every step's time, loss, timeline and memory (real_point.cpp reports them).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tessera/core/result/timeline.hpp"
#include "tessera/core/strategy/input_source.hpp"
#include "tessera/kernels/communicator.hpp"
#include "tessera/kernels/real/step_input_source.hpp"
#include "tessera/kernels/real/trainer.hpp"

namespace tessera::kernels::real {

struct Measurement {
  // The measured step of median duration, whole (its breakdown), but for its layer_compute: each
  // layer's and pass's median over the same steps (median_layer_times).
  StepReport typical;
  std::int64_t typical_step = 0;                   // its index, warm-up included
  InputSource typical_source = InputSource::none;  // where its samples came from
  // The median measured step that read files where later epochs read a store (as the first
  // epoch does, input_source.hpp); 0 when there was none or no store.
  double first_epoch_step_seconds = 0;
  std::vector<double> losses;
  std::string diverged;              // why training stopped early; empty when every loss was finite
  std::vector<double> step_seconds;  // every step, warm-up included
  std::vector<std::vector<TimelineEvent>> timelines;  // every step's, warm-up included
  std::vector<std::vector<MemorySample>> memory;      // every step's, warm-up included
};

// The median step rather than the mean: on a machine shared with other work a step now and then
// takes several times longer, and one such step would move the mean of a few far off. With a
// data store, steady state is the steps served by the store; those that read files stand for the
// first epoch.
// After every step the ranks compare notes (one small sum, outside the timed step): bad input
// on any rank stops all of them with EveryRankInputError; a loss that is not finite (the same on
// every rank) ends the training, said in `diverged`.
// `after_measured_step`, when given, is called on every rank after each measured step, outside
// its timing, with this rank's step time (the interleaved profile's slot).
Measurement train(Trainer& trainer, StepInputSource& source, Communicator& ranks,
                  std::int64_t warmup, std::int64_t measured, const InputPlan& plan,
                  const std::function<void(double step_seconds)>& after_measured_step = {});

// Each layer's and pass's median (the lower one) over the steps' reports, all of one model: in a
// single step one kernel now and then takes several times its usual time (the machine busy
// elsewhere for a moment), which would read as that layer's time.
std::vector<LayerComputeTime> median_layer_times(const std::vector<const StepReport*>& steps);

// "step times 0.1 0.09 | 0.08 ... s (warm-up | measured)" for the point's note; a part of more
// than kListedStepTimes steps is given as its count, minimum, quartiles and maximum.
inline constexpr std::size_t kListedStepTimes = 20;
std::string step_times(const std::vector<double>& seconds, std::int64_t warmup);
// "loss 2.3 (step 1) -> 1.9 (step 9)"; empty without losses.
std::string loss_summary(const std::vector<double>& losses);

}  // namespace tessera::kernels::real
