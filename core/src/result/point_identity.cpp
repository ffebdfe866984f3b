#include "tessera/core/result/point_identity.hpp"

namespace tessera {

void set_point_identity(PointResult& row, const std::string& scenario, std::int64_t point,
                        const std::string& backend, const ParallelConfig& config) {
  row.scenario = scenario;
  row.point = point;
  row.backend = backend;
  row.gpus = config.gpus();
  row.data = config.data;
  row.spatial_grid = grid_to_string(config.spatial_grid);
  row.model_degree = config.model_degree;
  row.tensor_degree = config.tensor;
  row.mini_batch = config.mini_batch;
  row.global_batch = config.global_batch();
}

PointResult point_identity(const std::string& scenario, std::int64_t point,
                           const std::string& backend, const ParallelConfig& config) {
  PointResult row;
  set_point_identity(row, scenario, point, backend, config);
  return row;
}

}  // namespace tessera
