#pragma once
// Time to train: a backend gives the time of one step; how many steps reach a target quality
// depends on the global batch (statistical efficiency: a larger batch needs fewer steps, but more
// epochs). Tessera takes that dependence from published measurements, never from its own
// training. Three forms (docs/design/time-to-train.md):
// - table: steps (or epochs) to the target at measured global batches, interpolated linearly in
//   log(batch)-log(steps) between rows; outside the rows the nearest segment is extended and the
//   point's note says the figure is extrapolated;
// - critical_batch: McCandlish et al. 2018 ("An empirical model of large-batch training"),
//   S = S_min (1 + B_noise / B), equivalently E = E_min (1 + B / B_noise) samples, with
//   E_min = S_min B_noise;
// - none: results carry no time to train.
// A scenario's `training` key chooses one; without it a zoo model with published figures uses
// them (published_statistical_efficiency), any other model has none.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tessera/core/scenario/scenario.hpp"

namespace tessera {

struct StepsAtBatch {
  std::int64_t global_batch = 0;
  double steps = 0;
};

struct StatisticalEfficiency {
  TrainingTarget target = TrainingTarget::none;
  std::vector<StepsAtBatch> table;  // target table: increasing global batch
  double critical_batch = 0;        // target critical_batch: B_noise, samples
  double min_steps = 0;             // target critical_batch: S_min
  double epoch_samples = 0;         // samples in one epoch
  std::string source;               // where the numbers come from
  std::string quality;              // the target quality in words, where known
  std::string origin;               // "the scenario's training key" or the zoo default
};

struct StepsToTarget {
  double steps = 0;
  double epochs = 0;
  bool extrapolated = false;  // the batch lies outside the table's rows
};

// Steps and epochs to the target at `global_batch`. Requires a target other than none.
StepsToTarget steps_to_target(const StatisticalEfficiency& efficiency, std::int64_t global_batch);

// The steps of the first epoch at `first_epoch_step_seconds` (where it is positive), the rest at
// `step_seconds`.
double time_to_train_seconds(const StepsToTarget& target, const StatisticalEfficiency& efficiency,
                             std::int64_t global_batch, double step_seconds,
                             double first_epoch_step_seconds);

// The statistical efficiency of the scenario: its training key, else the zoo model's published
// figures, else none. Throws InputError at the training key when an epoch's size is unknown.
StatisticalEfficiency resolve_statistical_efficiency(const Scenario& scenario);

// The published figures of a zoo model as the scenario configures it (nullopt when there are
// none, or its options leave the published setting, e.g. other classes than ImageNet's).
std::optional<StatisticalEfficiency> published_statistical_efficiency(const ModelSection& model);

// "table of 2 rows (Goyal et al. 2017 ...), 1,281,167 samples per epoch" for describe and logs.
std::string describe_statistical_efficiency(const StatisticalEfficiency& efficiency);
// "2.41 h" (hours: training runs are long), "-" for 0 (no target, or the point did not run).
std::string format_time_to_train(double seconds);
// The run document's record of it (result JSON's `statistical_efficiency`); null for none.
nlohmann::json to_json(const StatisticalEfficiency& efficiency);

}  // namespace tessera
