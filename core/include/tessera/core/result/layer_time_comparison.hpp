#pragma once
// Measured against simulated per layer: each point's compute time of every layer's forward and
// backward pass and of the update (result_schema.hpp's layer_compute) from the real backend and
// the simulator, side by side. Where the step times of `tessera validate-sim` differ, this says
// which layers the difference comes from.
#include <cstddef>
#include <string>
#include <vector>

#include "tessera/core/result/result_schema.hpp"

namespace tessera {

struct LayerTimeComparison {
  std::int64_t point = 0;
  std::string layer;
  std::string pass;
  double measured_seconds = 0;   // 0 where the real backend did not time it
  double simulated_seconds = 0;  // 0 where the step program has no compute for it
};

// Rows of every point both sides report per-layer times for, in the measured point's order
// (layers as the real backend lists them, then any only the simulator has).
std::vector<LayerTimeComparison> compare_layer_times(const std::vector<PointResult>& measured,
                                                     const std::vector<PointResult>& simulated);

std::string layer_comparison_to_csv(const std::vector<LayerTimeComparison>& rows);
// Per point, the `largest` rows by |simulated - measured|, with their share of the point's
// whole compute difference.
std::string layer_comparison_report(const std::vector<LayerTimeComparison>& rows,
                                    std::size_t largest);

}  // namespace tessera
