#pragma once
// Sums over one contiguous row of floats in double, fast enough for the per-channel reductions
// (batch-norm statistics, bias gradients) over activations of 10^7 elements per channel.
#include <cstddef>

namespace tessera::kernels {

struct TwoSums {
  double first = 0.0;
  double second = 0.0;
};

// Sums add_terms(index, first, second) over a row with four independent pairs of accumulators:
// one chain of dependent double additions would wait on each addition's latency (4 cycles),
// four chains keep the adder busy and let the compiler pair them in vector registers.
template <typename AddTerms>
TwoSums sum_row(std::size_t length, AddTerms add_terms) {
  constexpr std::size_t kLanes = 4;
  double first[kLanes] = {};
  double second[kLanes] = {};
  std::size_t index = 0;
  for (; index + kLanes <= length; index += kLanes) {
    for (std::size_t lane = 0; lane < kLanes; ++lane) {
      add_terms(index + lane, first[lane], second[lane]);
    }
  }
  TwoSums total;
  for (; index < length; ++index) add_terms(index, total.first, total.second);
  for (std::size_t lane = 0; lane < kLanes; ++lane) {
    total.first += first[lane];
    total.second += second[lane];
  }
  return total;
}

}  // namespace tessera::kernels
