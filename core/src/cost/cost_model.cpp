#include "tessera/core/cost/cost_model.hpp"

#include <algorithm>
#include <cstdio>

#include "tessera/core/common/measured_curve.hpp"
#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/model/layer_kind_rules.hpp"

namespace tessera {
namespace {

double bytes_of(const TensorShape& shape, std::int64_t batch, DType dtype) {
  return static_cast<double>(batch * shape.elements_per_sample() * dtype_bytes(dtype));
}

bool uses_tensor_cores(const Layer& layer, DType dtype) {
  return rules_of(layer.kind).is_matrix_product() && dtype != DType::float32;
}

}  // namespace

DeviceRoofline roofline_of(const GpuSpec& gpu) {
  DeviceRoofline roofline;
  roofline.device = gpu.model;
  roofline.fp32_flops_per_second = gpu.fp32_flops_per_second;
  roofline.tensor_flops_per_second = gpu.tensor_flops_per_second;
  roofline.memory_bandwidth_bytes_per_second = gpu.memory_bandwidth_bytes_per_second;
  roofline.compute_efficiency = gpu.compute_efficiency;
  roofline.memory_efficiency = gpu.memory_efficiency;
  roofline.launch_latency_seconds = gpu.kernel_launch_latency_seconds;
  return roofline;
}

ComputeCostModel::ComputeCostModel(DeviceRoofline device, const ProfileDatabase* profiles,
                                   double workspace_limit_bytes)
    : ComputeCostModel(std::move(device), profiles,
                       MicroBatchingSection{.workspace_limit_bytes = workspace_limit_bytes}) {}

ComputeCostModel::ComputeCostModel(DeviceRoofline device, const ProfileDatabase* profiles,
                                   MicroBatchingSection micro_batching)
    : device_(std::move(device)), profiles_(profiles), micro_batching_(micro_batching) {}

double ComputeCostModel::roofline_seconds(double flops, double bytes, bool tensor_cores) const {
  const double peak = tensor_cores && device_.tensor_flops_per_second > 0
                          ? device_.tensor_flops_per_second
                          : device_.fp32_flops_per_second;
  const double compute = flops / (peak * device_.compute_efficiency);
  const double memory =
      bytes / (device_.memory_bandwidth_bytes_per_second * device_.memory_efficiency);
  return std::max(compute, memory) + device_.launch_latency_seconds;
}

CostEstimate ComputeCostModel::layer_time(const Layer& layer,
                                          const std::vector<TensorShape>& inputs,
                                          const TensorShape& output, std::int64_t batch,
                                          DType dtype, Direction direction) const {
  const auto cost = layer_cost(layer, inputs, output, batch, dtype);
  const double flops = direction == Direction::forward         ? cost.flops.forward
                       : direction == Direction::backward_data ? cost.flops.backward_data
                                                               : cost.flops.backward_filter;
  const bool has_weights = computes_weight_gradients(layer, cost.parameters);
  if (layer.kind == LayerKind::input) return {0, Provenance::none};
  if (direction == Direction::backward_filter && !has_weights) return {0, Provenance::none};
  // Bytes each direction streams: its operands and its result, once.
  double in_bytes = 0;
  for (const auto& input : inputs) in_bytes += bytes_of(input, batch, dtype);
  const double out_bytes = bytes_of(output, batch, dtype);
  const double weight_bytes = static_cast<double>(cost.weight_bytes_read);
  double bytes = in_bytes + out_bytes + weight_bytes;
  if (direction == Direction::backward_data) {
    bytes = out_bytes + in_bytes + weight_bytes + (cost.backward_needs.input ? in_bytes : 0) +
            (cost.backward_needs.output ? out_bytes : 0);
  }
  if (layer.kind == LayerKind::concat && direction == Direction::forward) bytes = 2 * out_bytes;
  // The memory-bound kernels between a composite layer's products run after them, not beside.
  const auto& between = cost.intermediate_bytes;
  const double intermediate = direction == Direction::forward         ? between.forward
                              : direction == Direction::backward_data ? between.backward_data
                                                                      : between.backward_filter;
  if (profiles_) {
    const auto key = kernel_shape_key(layer, inputs, output);
    if (auto hit = profiles_->best(device_.device, to_string(layer.kind), direction, key, dtype,
                                   batch, micro_batching_.workspace_limit_bytes)) {
      return {hit->time_seconds, Provenance::profile, flops, bytes + intermediate};
    }
  }
  return {
      roofline_seconds(flops, bytes, uses_tensor_cores(layer, dtype)) +
          intermediate / (device_.memory_bandwidth_bytes_per_second * device_.memory_efficiency),
      Provenance::roofline, flops, bytes + intermediate};
}

std::string update_op(Optimizer optimizer) {
  return "update_" + to_string(optimizer);
}

std::string parameters_shape(double parameters) {
  char text[48];
  std::snprintf(text, sizeof text, "parameters %.0f", parameters);
  return text;
}

std::string gradient_sum_op() {
  return "gradient_sum";
}

std::optional<CostEstimate> ComputeCostModel::profiled_parameter_kernel(const std::string& op,
                                                                        double parameters,
                                                                        DType dtype) const {
  if (!profiles_) return std::nullopt;
  if (auto hit =
          profiles_->best(device_.device, op, Direction::forward, parameters_shape(parameters),
                          dtype, 1, micro_batching_.workspace_limit_bytes)) {
    return CostEstimate{hit->time_seconds, Provenance::profile};
  }
  MeasuredCurve measured;
  for (const auto& row : profiles_->entries_of_op(device_.device, op, Direction::forward, dtype)) {
    double counted = 0;
    char rest = 0;
    if (!row.ok || row.micro_batch != 1 || !(row.time_seconds > 0) ||
        std::sscanf(row.shape.c_str(), "parameters %lf%c", &counted, &rest) != 1) {
      continue;
    }
    measured.add(counted, row.time_seconds);
  }
  if (const auto seconds = measured.seconds(parameters)) {
    return CostEstimate{*seconds, Provenance::profile};
  }
  return std::nullopt;
}

CostEstimate ComputeCostModel::optimizer_time(double parameters, DType dtype,
                                              Optimizer optimizer) const {
  // Reads weights, gradients and state; writes weights and state.
  const double states = optimizer == Optimizer::adam ? 2 : optimizer == Optimizer::momentum ? 1 : 0;
  const double bytes = parameters * static_cast<double>(dtype_bytes(dtype)) * (3 + 2 * states);
  const double flops = parameters * (2 + 4 * states);
  if (auto profiled = profiled_parameter_kernel(update_op(optimizer), parameters, dtype)) {
    return {profiled->seconds, profiled->provenance, flops, bytes};
  }
  return {roofline_seconds(flops, bytes, false), Provenance::roofline, flops, bytes};
}

CostEstimate ComputeCostModel::gradient_sum_time(double parameters, DType dtype) const {
  if (parameters <= 0) return {0, Provenance::none};
  // Reads both gradients, writes the step's.
  const double bytes = parameters * static_cast<double>(dtype_bytes(dtype)) * 3;
  if (auto profiled = profiled_parameter_kernel(gradient_sum_op(), parameters, dtype)) {
    return {profiled->seconds, profiled->provenance, parameters, bytes};
  }
  return {roofline_seconds(2 * parameters, bytes, false), Provenance::roofline, parameters, bytes};
}

CostEstimate ComputeCostModel::copy_time(double bytes_read, double bytes_written) const {
  if (bytes_read + bytes_written <= 0) return {0, Provenance::none};
  return {roofline_seconds(0, bytes_read + bytes_written, false), Provenance::roofline, 0,
          bytes_read + bytes_written};
}

}  // namespace tessera
