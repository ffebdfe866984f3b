#include "tessera/kernels/profile/microbatch_study.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>

#include "tessera/core/micro_batching/micro_batch_planner.hpp"
#include "tessera/kernels/device.hpp"
#include "tessera/kernels/layer_geometry.hpp"
#include "tessera/kernels/layer_kernels.hpp"
#include "tessera/kernels/micro_batched_convolution.hpp"

namespace tessera::kernels {
namespace {

std::size_t study_size(std::int64_t value) {
  return static_cast<std::size_t>(value);
}

// A convolution's operands for the whole batch on the device, shared by every plan run on it.
class StudyOperands {
 public:
  StudyOperands(Device& device, const KernelToProfile& kernel)
      : device_(device),
        geometry_(convolution_geometry(kernel.layer, kernel.inputs.front(), kernel.output)),
        bias_(std::get<ConvolutionParams>(kernel.layer.params).bias) {
    const std::int64_t n = kernel.batch;
    x_ = operand(study_size(n * geometry_.input_floats_per_sample()));
    w_ = operand(study_size(geometry_.filter_floats()));
    y_ = operand(study_size(n * geometry_.output_floats_per_sample()));
    if (bias_) b_ = operand(study_size(geometry_.out_channels));
    for (std::int64_t extent : geometry_.output_spatial) output_spatial_ *= extent;
  }

  // Median seconds of the plan's run, with the bias the profiler times with the convolution.
  double measure(Direction direction, const MicroBatchPlan& plan, const ProfilerOptions& options) {
    const double workspace_bytes =
        micro_batched_workspace_bytes(device_.convolutions(), geometry_, direction, plan);
    std::unique_ptr<DeviceMemory> workspace;
    if (workspace_bytes > 0)
      workspace = device_.allocate(static_cast<std::size_t>(workspace_bytes));
    const std::int64_t n = plan.samples();
    const auto run = [&] {
      ConvolutionKernels& convolutions = device_.convolutions();
      LayerKernels& layers = device_.layers();
      switch (direction) {
        case Direction::forward:
          run_micro_batched(convolutions, geometry_, direction, plan, x_, w_, y_, 0.0f,
                            workspace.get());
          if (bias_) layers.bias_forward(n, geometry_.out_channels, output_spatial_, b_, y_);
          break;
        case Direction::backward_data:
          run_micro_batched(convolutions, geometry_, direction, plan, y_, w_, x_, 0.0f,
                            workspace.get());
          break;
        case Direction::backward_filter:
          run_micro_batched(convolutions, geometry_, direction, plan, x_, y_, w_, 0.0f,
                            workspace.get());
          if (bias_) layers.bias_backward(n, geometry_.out_channels, output_spatial_, y_, b_, 0.0f);
          break;
      }
    };
    return median_seconds(device_, run, options);
  }

 private:
  float* operand(std::size_t floats) {
    // Drawn on the device from a fixed seed per operand, as the profiler's (no denormals).
    floats = std::max<std::size_t>(floats, 1);
    memory_.push_back(device_.allocate(floats * sizeof(float)));
    device_.fill_uniform(memory_.back()->data(), floats, memory_.size());
    return memory_.back()->data();
  }

  Device& device_;
  ConvolutionGeometry geometry_;
  bool bias_ = false;
  std::int64_t output_spatial_ = 1;
  std::vector<std::unique_ptr<DeviceMemory>> memory_;
  float* x_ = nullptr;
  float* w_ = nullptr;
  float* y_ = nullptr;
  float* b_ = nullptr;
};

bool policy_capped(MicroBatchPolicy policy, std::int64_t batch, const StudyOptions& options) {
  return policy == MicroBatchPolicy::all && batch > options.all_policy_max_batch;
}

}  // namespace

std::vector<std::int64_t> study_micro_batch_sizes(const StudyOptions& options, std::int64_t batch) {
  std::set<std::int64_t> sizes{batch};  // the undivided baseline is always needed
  for (MicroBatchPolicy policy : options.policies) {
    if (policy_capped(policy, batch, options)) continue;
    for (std::int64_t size : candidate_micro_batch_sizes(policy, batch)) sizes.insert(size);
  }
  return {sizes.begin(), sizes.end()};
}

std::size_t profile_missing_sizes(Device& device, KernelToProfile kernel,
                                  const std::vector<std::int64_t>& sizes,
                                  const ProfilerOptions& options, ProfileDatabase& database) {
  kernel.micro_batches = sizes_to_measure(device, database, kernel, sizes, options);
  if (!kernel.micro_batches.empty())
    profile_kernels(device, {kernel}, options, database, {}, &database);
  return kernel.micro_batches.size();
}

std::size_t profile_missing_sizes_in_context(Device& device, const KernelToProfile& kernel,
                                             const std::vector<std::int64_t>& sizes,
                                             const ProfilerOptions& options,
                                             ProfileDatabase& database,
                                             const ProfileDatabase* measured) {
  const ProfileDatabase& earlier = measured != nullptr ? *measured : database;
  const MeasuredRows earlier_rows = measured_rows(earlier, device.info().name, kernel);
  StudyOperands operands(device, kernel);
  const auto geometry = convolution_geometry(kernel.layer, kernel.inputs.front(), kernel.output);
  std::size_t sizes_measured = 0;
  for (std::int64_t size : sizes_to_measure(device, earlier, kernel, sizes, options)) {
    ++sizes_measured;
    const std::int64_t repeats = std::max<std::int64_t>(1, kernel.batch / size);
    for (const ConvolutionAlgorithm& algorithm :
         device.convolutions().algorithms(geometry, size, kernel.direction)) {
      if (skips_algorithm(options, algorithm.name) ||
          earlier_rows.contains({size, algorithm.name})) {
        continue;
      }
      ProfileEntry row{.device = device.info().name,
                       .op = kernel.op,
                       .direction = kernel.direction,
                       .shape = kernel.shape,
                       .dtype = kernel.dtype,
                       .micro_batch = size,
                       .algorithm = algorithm.name,
                       .workspace_bytes = algorithm.workspace_bytes,
                       .ok = algorithm.workspace_bytes <= options.max_workspace_bytes};
      MicroBatchPlan plan;
      plan.micro_batches.assign(static_cast<std::size_t>(repeats),
                                MicroBatch{.samples = size, .algorithm = algorithm.name});
      if (row.ok) {
        try {
          row.time_seconds =
              operands.measure(kernel.direction, plan, options) / static_cast<double>(repeats);
        } catch (const std::exception&) {
          row.ok = false;  // out of memory or a refused shape: not run, as the profiler records it
        }
      }
      database.add(row);
    }
  }
  return sizes_measured;
}

std::vector<StudyRow> study_kernel(Device& device, const std::string& kernel_name,
                                   const KernelToProfile& kernel, const ProfileDatabase& database,
                                   const StudyOptions& options) {
  auto profile_rows = database.entries_for(device.info().name, kernel.op, kernel.direction,
                                           kernel.shape, kernel.dtype);
  std::erase_if(profile_rows, [&](const ProfileEntry& row) {
    return skips_algorithm(options.measurement, row.algorithm);
  });
  StudyOperands operands(device, kernel);
  std::map<std::string, double> measured_by_plan;  // equal plans are run once
  const auto measure = [&](const MicroBatchPlan& plan) {
    const std::string key = describe(plan);
    if (!measured_by_plan.contains(key)) {
      measured_by_plan[key] = operands.measure(kernel.direction, plan, options.measurement);
    }
    return measured_by_plan[key];
  };

  std::vector<StudyRow> rows;
  for (double limit : options.workspace_limits_bytes) {
    const auto baseline =
        plan_kernel(profile_rows, MicroBatchPolicy::undivided, kernel.batch, limit);
    for (MicroBatchPolicy policy : options.policies) {
      StudyRow row{.kernel = kernel_name,
                   .direction = kernel.direction,
                   .batch = kernel.batch,
                   .workspace_limit_bytes = limit,
                   .policy = policy};
      if (policy_capped(policy, kernel.batch, options)) {
        row.note = "not run: batch " + std::to_string(kernel.batch) + " > --all-max-batch " +
                   std::to_string(options.all_policy_max_batch);
        rows.push_back(row);
        continue;
      }
      const auto planned = plan_kernel(profile_rows, policy, kernel.batch, limit);
      if (!planned || !baseline) {
        row.note = "no plan: no algorithm ran at the sizes that make up the batch";
        rows.push_back(row);
        continue;
      }
      row.plan = describe(planned->plan);
      row.plan_workspace_bytes = planned->plan.workspace_bytes();
      row.limit_met = planned->limit_met;
      row.baseline_limit_met = baseline->limit_met;
      if (!row.limit_met) {
        row.note = "no plan fits the limit: least-workspace plan";
      } else if (!row.baseline_limit_met) {
        row.note = "no undivided algorithm fits the limit: baseline is the least-workspace one";
      }
      row.predicted_seconds = planned->plan.seconds();
      row.baseline_predicted_seconds = baseline->plan.seconds();
      row.measured_seconds = measure(planned->plan);
      row.baseline_measured_seconds = measure(baseline->plan);
      rows.push_back(row);
    }
  }
  return rows;
}

}  // namespace tessera::kernels
