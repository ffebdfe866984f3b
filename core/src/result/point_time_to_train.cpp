#include "tessera/core/result/point_time_to_train.hpp"

#include <string>

namespace tessera {
namespace {

constexpr const char* kExtrapolatedNote = "time to train extrapolated: ";

// The note without an earlier call's time-to-train sentence, which is always its last part.
std::string without_extrapolation_note(const std::string& note) {
  if (note.starts_with(kExtrapolatedNote)) return {};
  const auto at = note.find(std::string("; ") + kExtrapolatedNote);
  return at == std::string::npos ? note : note.substr(0, at);
}

}  // namespace

void fill_time_to_train(PointResult& point, const StatisticalEfficiency& efficiency) {
  point.note = without_extrapolation_note(point.note);
  point.epochs = point.steps_to_target = point.time_to_train_seconds = 0;
  if (efficiency.target == TrainingTarget::none || point.global_batch < 1) return;
  const auto target = steps_to_target(efficiency, point.global_batch);
  point.epochs = target.epochs;
  point.steps_to_target = target.steps;
  if (point.status == PointStatus::ok && point.step_seconds > 0) {
    // The staging phase comes once, before the first step.
    point.time_to_train_seconds =
        point.staging_seconds + time_to_train_seconds(target, efficiency, point.global_batch,
                                                      point.step_seconds,
                                                      point.first_epoch_step_seconds);
  }
  if (target.extrapolated) {
    const std::string sentence =
        std::string(kExtrapolatedNote) + "global batch " + std::to_string(point.global_batch) +
        " lies outside the steps-to-target table's " +
        std::to_string(efficiency.table.front().global_batch) + ".." +
        std::to_string(efficiency.table.back().global_batch) + " (" + efficiency.source + ")";
    point.note += (point.note.empty() ? "" : "; ") + sentence;
  }
}

}  // namespace tessera
