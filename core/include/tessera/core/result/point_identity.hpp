#pragma once
// The identity every result row starts from: its scenario, point and backend, and the point's
// parallel configuration (GPUs, replicas, spatial grid, stages, batches). The simulator, the real
// backend, the plan's candidate rows and validate-sim's unmeasured points all fill it here.
#include <cstdint>
#include <string>

#include "tessera/core/result/result_schema.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"

namespace tessera {

// Sets `row`'s identity fields and leaves the others as they are.
void set_point_identity(PointResult& row, const std::string& scenario, std::int64_t point,
                        const std::string& backend, const ParallelConfig& config);
// A new row with only its identity set.
PointResult point_identity(const std::string& scenario, std::int64_t point,
                           const std::string& backend, const ParallelConfig& config);

}  // namespace tessera
