#pragma once
// Values gathered over a point's ranks, each rank giving its own (one sum over the group): what
// run_real_point reports for the point as a whole.
#include <vector>

#include "tessera/core/common/layer_compute_time.hpp"
#include "tessera/kernels/communicator.hpp"

namespace tessera::kernels::real {

// The value of every rank of `group`, gathered by a sum (each rank fills its own slot).
std::vector<double> gather_values(Communicator& group, double value);

// `values` as rank `owner` of `group` holds them, on every rank (one sum, the others adding zeros).
std::vector<double> values_of_rank(Communicator& group, int owner, std::vector<double> values);

// Each layer's time on the rank that computes it, where several do (data, spatial or tensor
// parallelism) the one of them with the longest step (`steps`), as the simulator reports each
// layer on its GPU; pipeline stages compute different layers, so no one rank has them all. The
// optimizer update (pass "update"), which every rank runs on its own weights, is the longest.
std::vector<LayerComputeTime> layer_times_of_computing_ranks(Communicator& group,
                                                             const std::vector<double>& steps,
                                                             std::vector<LayerComputeTime> times);

}  // namespace tessera::kernels::real
