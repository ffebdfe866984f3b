// The scenario's statistical efficiency (its training key, else the zoo's published figures) and
// its description.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "tessera/core/common/quantity.hpp"
#include "tessera/core/time_to_train/time_to_train.hpp"

namespace tessera {
namespace {

SourceLocation training_location(const Scenario& s) {
  auto it = s.where.find("training.target");
  return it != s.where.end() ? it->second : s.training->where;
}

StatisticalEfficiency from_training_key(const Scenario& s, double epoch_samples) {
  const TrainingSection& t = *s.training;
  StatisticalEfficiency e;
  e.target = t.target;
  e.epoch_samples = epoch_samples;
  e.source = t.source.empty() ? "the scenario file (no source given)" : t.source;
  e.origin = "the scenario's training key";
  for (const auto& row : t.steps_to_target) {
    const double steps = row.steps
                             ? *row.steps
                             : *row.epochs * epoch_samples / static_cast<double>(row.global_batch);
    e.table.push_back({row.global_batch, steps});
  }
  if (t.target == TrainingTarget::critical_batch) {
    e.critical_batch = *t.critical_batch;
    // E_min = S_min B_noise (McCandlish et al. 2018), E_min given in epochs.
    e.min_steps = t.min_steps ? *t.min_steps : *t.min_epochs * epoch_samples / e.critical_batch;
  }
  return e;
}

std::string number_text(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", value);
  return text;
}

}  // namespace

StatisticalEfficiency resolve_statistical_efficiency(const Scenario& s) {
  const auto published = published_statistical_efficiency(s.model);
  if (!s.training) return published.value_or(StatisticalEfficiency{});
  if (s.training->target == TrainingTarget::none) {
    StatisticalEfficiency none;
    none.origin = "the scenario's training key (target none)";
    return none;
  }
  double epoch_samples = 0;
  if (s.io.samples) {
    epoch_samples = static_cast<double>(*s.io.samples);
  } else if (published) {
    epoch_samples = published->epoch_samples;
  } else {
    throw InputError(training_location(s), "training.target",
                     "epochs need the size of an epoch: set io.samples (the samples, or "
                     "sequences, of the training set)");
  }
  return from_training_key(s, epoch_samples);
}

std::string describe_statistical_efficiency(const StatisticalEfficiency& e) {
  if (e.target == TrainingTarget::none) {
    return "none (no steps-to-target figures for this model; the training key sets them)";
  }
  std::string text;
  if (e.target == TrainingTarget::table) {
    text = "table of " + std::to_string(e.table.size()) + " rows, global batch " +
           std::to_string(e.table.front().global_batch) + ".." +
           std::to_string(e.table.back().global_batch) +
           " (log-log interpolation; outside them extrapolated and flagged)";
  } else {
    text = "critical batch B_noise " + number_text(e.critical_batch) + ", S_min " +
           number_text(e.min_steps) + " steps (McCandlish et al. 2018: S = S_min (1 + B_noise/B))";
  }
  text += "; " + format_count(static_cast<std::int64_t>(e.epoch_samples)) + " samples per epoch";
  if (!e.quality.empty()) text += "; target: " + e.quality;
  return text + "; source: " + e.source + "; from " + e.origin;
}

std::string format_time_to_train(double seconds) {
  if (seconds <= 0) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.2f h", seconds / 3600);
  return text;
}

nlohmann::json to_json(const StatisticalEfficiency& e) {
  if (e.target == TrainingTarget::none) return nullptr;
  nlohmann::json table = nlohmann::json::array();
  for (const auto& row : e.table) {
    table.push_back({{"global_batch", row.global_batch}, {"steps", row.steps}});
  }
  nlohmann::json json = {{"target", to_string(e.target)},
                         {"epoch_samples", e.epoch_samples},
                         {"source", e.source},
                         {"quality", e.quality},
                         {"origin", e.origin}};
  if (e.target == TrainingTarget::table) json["steps_to_target"] = table;
  if (e.target == TrainingTarget::critical_batch) {
    json["critical_batch"] = e.critical_batch;
    json["min_steps"] = e.min_steps;
  }
  return json;
}

}  // namespace tessera
