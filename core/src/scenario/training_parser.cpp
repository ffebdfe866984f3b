#include "training_parser.hpp"

#include "remember_location.hpp"
#include "scenario_enums.hpp"

namespace tessera {
namespace {

// Steps, epochs and batches far beyond any training run, so that products stay finite.
constexpr double kMostSteps = 1e12;
constexpr double kMostEpochs = 1e6;
constexpr std::int64_t kMostGlobalBatch = std::int64_t{1} << 40;

StepsToTargetRow parse_row(const YamlValue& value) {
  if (!value.is_map()) value.fail("a mapping {global_batch: N, steps: S} or {..., epochs: E}");
  YamlMap map(value, {"global_batch", "steps", "epochs"});
  StepsToTargetRow row;
  row.global_batch = map.required("global_batch", "the global batch of this measurement")
                         .as_integer(1, kMostGlobalBatch);
  if (map.has("steps") == map.has("epochs")) {
    value.fail_problem("give exactly one of 'steps' or 'epochs' to the target at this batch");
  }
  if (auto steps = map.optional("steps")) row.steps = steps->as_number(1e-9, kMostSteps);
  if (auto epochs = map.optional("epochs")) row.epochs = epochs->as_number(1e-9, kMostEpochs);
  return row;
}

void parse_table(Scenario& s, const YamlMap& map, TrainingSection& t) {
  auto rows = map.required("steps_to_target",
                           "a list of {global_batch, steps or epochs}, at least two rows");
  remember(s, rows);
  for (const auto& item : rows.as_sequence(2, 1000)) {
    auto row = parse_row(item);
    if (!t.steps_to_target.empty() && row.global_batch <= t.steps_to_target.back().global_batch) {
      item.fail_problem("rows must be in increasing global_batch; " +
                        std::to_string(row.global_batch) + " follows " +
                        std::to_string(t.steps_to_target.back().global_batch));
    }
    t.steps_to_target.push_back(row);
  }
}

void parse_critical_batch(Scenario& s, const YamlMap& map, TrainingSection& t) {
  auto critical = map.required("critical_batch", "the critical batch B_noise in samples");
  t.critical_batch = critical.as_number(1e-9, static_cast<double>(kMostGlobalBatch));
  remember(s, critical);
  if (map.has("min_steps") == map.has("min_epochs")) {
    map.value().fail_problem(
        "give exactly one of 'min_steps' (S_min, the steps at an unbounded batch) or "
        "'min_epochs' (E_min, the epochs at a vanishing batch)");
  }
  if (auto steps = map.optional("min_steps")) t.min_steps = steps->as_number(1e-9, kMostSteps);
  if (auto epochs = map.optional("min_epochs")) {
    t.min_epochs = epochs->as_number(1e-9, kMostEpochs);
  }
}

// A key of another target is a mistake worth naming, not something to ignore.
void refuse_keys_of_other_targets(const YamlMap& map, TrainingTarget target) {
  const std::vector<std::pair<std::string, TrainingTarget>> owners{
      {"steps_to_target", TrainingTarget::table},
      {"critical_batch", TrainingTarget::critical_batch},
      {"min_steps", TrainingTarget::critical_batch},
      {"min_epochs", TrainingTarget::critical_batch}};
  for (const auto& [key, owner] : owners) {
    if (owner == target) continue;
    if (auto value = map.optional(key)) {
      value->fail_problem("applies to target " + to_string(owner) + " only; this target is " +
                          to_string(target));
    }
  }
}

}  // namespace

void parse_training(Scenario& s, const YamlValue& value) {
  YamlMap map(value,
              {"target", "source", "steps_to_target", "critical_batch", "min_steps", "min_epochs"});
  remember(s, value);
  TrainingSection t;
  t.where = value.location();
  auto target = map.required("target", "table, critical_batch or none");
  t.target = parse_enum<TrainingTarget>(target);
  remember(s, target);
  if (auto source = map.optional("source")) t.source = source->as_string();
  refuse_keys_of_other_targets(map, t.target);
  if (t.target == TrainingTarget::table) parse_table(s, map, t);
  if (t.target == TrainingTarget::critical_batch) parse_critical_batch(s, map, t);
  s.training = std::move(t);
}

}  // namespace tessera
