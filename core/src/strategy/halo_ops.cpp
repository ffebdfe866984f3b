#include "halo_ops.hpp"

#include "halo_geometry.hpp"

namespace tessera {

HaloExchangeOps halo_exchange_ops(const ResolvedLayer& layer, const LayerShard& shard,
                                  std::size_t index, int axis, Direction direction, int exchange,
                                  DType dtype, const ComputeCostModel& costs) {
  const auto a = static_cast<std::size_t>(axis);
  const Halo halo = shard.input_halo[a];
  const double plane = plane_bytes(shard.local_inputs[0], axis, dtype);
  const bool forward = direction == Direction::forward;
  const double to_lower = plane * static_cast<double>(forward ? halo.upper : halo.lower);
  const double to_upper = plane * static_cast<double>(forward ? halo.lower : halo.upper);
  const double faces = to_lower + to_upper;
  const auto pack = costs.copy_time(faces, faces);
  // Backward sums what arrives into the planes it overlaps: read both, write one.
  const auto unpack = costs.copy_time(forward ? faces : 2 * faces, faces);
  const StepOp common{.kind = StepOpKind::halo_start,
                      .category = OpCategory::halo,
                      .layer = index,
                      .direction = direction,
                      .axis = axis,
                      .bytes_to_lower = to_lower,
                      .bytes_to_upper = to_upper,
                      .exchange = exchange};
  HaloExchangeOps ops{common, common};
  ops.start.label = layer.layer.name + (forward ? " halo " : " gradient halo ") +
                    spatial_axis_names(layer.output_shape.spatial_rank())[a];
  ops.start.seconds = pack.seconds;
  ops.start.provenance = pack.provenance;
  ops.wait.kind = StepOpKind::halo_wait;
  ops.wait.label = layer.layer.name + " halo wait";
  ops.wait.seconds = unpack.seconds;
  ops.wait.provenance = unpack.provenance;
  return ops;
}

CostEstimate window_load_time(const LayerShard& shard, DType dtype, const ComputeCostModel& costs) {
  const auto bytes = [&](const TensorShape& shape) {
    return static_cast<double>(shape.elements() * dtype_bytes(dtype));
  };
  const double owned = bytes(shard.local_inputs[0]);
  return costs.copy_time(owned, bytes(shard.local_input_with_halo) + owned);
}

CostEstimate window_store_time(const LayerShard& shard, DType dtype,
                               const ComputeCostModel& costs) {
  const double owned = static_cast<double>(shard.local_inputs[0].elements() * dtype_bytes(dtype));
  return costs.copy_time(owned, owned);
}

}  // namespace tessera
