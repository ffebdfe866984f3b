#pragma once
// The time-to-train fields of a point's result (time_to_train.hpp's model applied to it).
#include "tessera/core/result/result_schema.hpp"
#include "tessera/core/time_to_train/time_to_train.hpp"

namespace tessera {

// Sets the point's epochs and steps to the target (every status) and its time to train (points
// that ran: ok with a step time; 0 otherwise), and says in its note when the figures are
// extrapolated. Replaces what an earlier call wrote, so resumed points take the current model.
// A target of none leaves zeros.
void fill_time_to_train(PointResult& point, const StatisticalEfficiency& efficiency);

}  // namespace tessera
