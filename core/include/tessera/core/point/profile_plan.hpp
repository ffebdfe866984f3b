#pragma once
// What `tessera profile` must measure for a scenario: every distinct kernel a GPU runs at any of
// its sweep points (a layer shard in one direction, keyed exactly as the cost model looks it up),
// with the micro-batch sizes the scenario's micro-batching policy may use.
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/common/dtype.hpp"
#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/model/layer.hpp"

namespace tessera {

struct KernelToProfile {
  Layer layer;                      // hyper-parameters as in the model
  std::vector<TensorShape> inputs;  // the shard's per-sample input shapes (n = 1)
  TensorShape output;               // the shard's per-sample output shape (n = 1)
  Direction direction = Direction::forward;
  DType dtype = DType::float32;
  std::int64_t batch = 1;  // samples one GPU runs undivided
  // Batch sizes to measure, ascending, ending with batch: candidate_micro_batch_sizes() of the
  // scenario's policy (micro_batch_planner.hpp).
  std::vector<std::int64_t> micro_batches;
  std::string op;     // to_string(layer.kind)
  std::string shape;  // kernel_shape_key(layer, inputs, output)
  // A window of a split convolution's shard as the partitioned kernel runs it (window_kernels.hpp;
  // the layer unpadded), not a layer's shard.
  bool window = false;
};

// A streaming kernel over one GPU's parameters: the optimizer's update of a model-parallel
// stage's, or, in a pipeline, one layer's gradients of a micro-batch added into the step's
// (step_part.hpp's gradient_sum). Keyed as the cost model looks it up (cost_model.hpp).
enum class ParameterKernel { update, gradient_sum };

struct ParameterKernelToProfile {
  ParameterKernel kernel = ParameterKernel::update;
  Optimizer optimizer = Optimizer::adam;  // of an update
  double parameters = 0;
  DType dtype = DType::float32;
  std::string op;     // update_op(optimizer) or gradient_sum_op()
  std::string shape;  // parameters_shape(parameters)
};

// One of several processes profiling side by side (`tessera profile` under mpirun).
struct ProfilingRank {
  int rank = 0;
  int ranks = 1;
};

// Distinct kernels over all sweep points, in model order, first point first; a split convolution's
// windows (every shard's, forward whole, interior and boundary, backward whole) follow its shard.
// Only convolutions are micro-batched; other layers are measured at their undivided batch.
// At a point of exactly `profiling.ranks` GPUs, only the layers of the model-parallel stage that
// rank holds (rank_numbering.hpp): a pipeline's ranks then time their own stages' kernels beside
// one another, as they run in training, instead of every rank timing every kernel beside a copy
// of itself. At other points, and without model parallelism, every rank has every layer.
std::vector<KernelToProfile> kernels_to_profile(const LoadedScenario& scenario,
                                                const ProfilingRank& profiling = {});
// What makes two kernels of the plan the same measurement: op, shape, direction and batch (the
// layer's name is not part of it; the first layer of a shape names the kernel).
std::string kernel_identity(const KernelToProfile& kernel);
// Distinct updates over all sweep points and stages, then the distinct gradient sums of the
// pipelined points' layers; at a point of exactly `profiling.ranks` GPUs, only the stage that
// rank holds (as kernels_to_profile).
std::vector<ParameterKernelToProfile> parameter_kernels_to_profile(
    const LoadedScenario& scenario, const ProfilingRank& profiling = {});

}  // namespace tessera
