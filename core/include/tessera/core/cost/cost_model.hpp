#pragma once
// How long one GPU's kernels take. Two sources, and every estimate says which it used:
//  - the profile database of measured kernel times (exact shard shape, dtype, batch);
//  - a roofline from the device's specifications: max(FLOPs / achieved peak, bytes / achieved
//    memory bandwidth) + launch latency.
#include <cstdint>
#include <optional>
#include <vector>

#include "tessera/core/common/provenance.hpp"
#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/model/layer.hpp"
#include "tessera/core/scenario/cluster_spec.hpp"
#include "tessera/core/scenario/scenario.hpp"

namespace tessera {

struct CostEstimate {
  double seconds = 0;
  Provenance provenance = Provenance::roofline;
  // The kernel's work as the roofline counts it, whichever source gave the time (a Chakra
  // trace's num_ops and tensor_size): arithmetic, and bytes read and written.
  double flops = 0;
  double bytes = 0;
};

struct DeviceRoofline {
  std::string device;  // matched against the profile database's device names
  double fp32_flops_per_second = 0;
  double tensor_flops_per_second =
      0;  // float16/bfloat16 matrix products (convolutions, dense, LSTM)
  double memory_bandwidth_bytes_per_second = 0;
  double compute_efficiency = 0.7;  // achieved fraction of peak
  double memory_efficiency = 0.8;
  double launch_latency_seconds = 5e-6;
};

DeviceRoofline roofline_of(const GpuSpec& gpu);

// How the profile database names the optimizer update ("update_adam", ...) and its size
// ("parameters 9437184").
std::string update_op(Optimizer optimizer);
std::string parameters_shape(double parameters);
// How it names one layer's parameter gradients of a micro-batch added into the step's (a
// pipeline's gradients add up over its micro-batches), sized as an update.
std::string gradient_sum_op();

// Convolution kernels are costed by the micro-batching plan (network_micro_batch_plan.hpp) that
// build_step_programs makes from this model's profiles and micro-batching settings; layer_time is
// the undivided kernel under the per-kernel workspace limit.
class ComputeCostModel {
 public:
  // `profiles` may be null; it must outlive the model.
  ComputeCostModel(DeviceRoofline device, const ProfileDatabase* profiles,
                   double workspace_limit_bytes);
  ComputeCostModel(DeviceRoofline device, const ProfileDatabase* profiles,
                   MicroBatchingSection micro_batching);

  // Time of one direction of one layer on a shard of `batch` samples. Directions a layer does
  // not have (e.g. backward_filter of ReLU) cost zero.
  CostEstimate layer_time(const Layer& layer, const std::vector<TensorShape>& inputs,
                          const TensorShape& output, std::int64_t batch, DType dtype,
                          Direction direction) const;
  // The optimizer step over `parameters` weights: the profile's row for exactly this many
  // (update_op, parameters_shape); else read off the profile's rows at other counts (a streaming
  // kernel, linear in the weights: MeasuredCurve) when there are two; else the roofline
  // (memory-bound). A pipeline stage's or a shard's count need not be one the profile measured.
  CostEstimate optimizer_time(double parameters, DType dtype, Optimizer optimizer) const;
  // One layer's `parameters` gradients added into the step's (y += x), looked up as the update
  // is; else the roofline (memory-bound).
  CostEstimate gradient_sum_time(double parameters, DType dtype) const;
  // Data movement within the device without arithmetic (a halo face packed into a message, or
  // one unpacked or summed into the tensor): memory-bound, so the roofline of the bytes moved.
  CostEstimate copy_time(double bytes_read, double bytes_written) const;
  // Roofline alone (for reports and tests).
  double roofline_seconds(double flops, double bytes, bool tensor_cores) const;

  const DeviceRoofline& device() const { return device_; }
  const ProfileDatabase* profiles() const { return profiles_; }
  const MicroBatchingSection& micro_batching() const { return micro_batching_; }

 private:
  // A streaming kernel over `parameters` weights (`op`, parameters_shape): its row, else read off
  // its rows at other counts; none without two.
  std::optional<CostEstimate> profiled_parameter_kernel(const std::string& op, double parameters,
                                                        DType dtype) const;

  DeviceRoofline device_;
  const ProfileDatabase* profiles_;
  MicroBatchingSection micro_batching_;
};

}  // namespace tessera
