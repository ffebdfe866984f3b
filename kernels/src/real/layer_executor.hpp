#pragma once
// One layer of the model as this rank runs it: its kernels on the rank's shard (partitioned
// sliding windows for spatially split layers, plain kernels otherwise), its parameters' size and
// initial values. The Trainer owns the tensors and calls forward in layer order and backward in
// reverse; pointers are device memory. Input gradients are overwritten; a null one is not wanted.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "tessera/core/model_graph.hpp"
#include "tessera/core/parallel_strategy.hpp"

namespace tessera::kernels::real {

struct ExecutionContext;

// The rank's tensors around a layer: floats per tensor (batch included) and voxels per channel.
struct LocalShapes {
  std::int64_t batch = 1;
  std::int64_t first_sample = 0;  // the first of `batch` in the replica's mini-batch
  // After the redistribution: the spatial group's ranks hold the replica's samples between them.
  bool shares_samples = false;
  std::vector<std::int64_t> input_floats;
  std::vector<std::int64_t> input_voxels;
  std::int64_t output_floats = 0;
  std::int64_t output_voxels = 1;
};

class LayerExecutor {
 public:
  virtual ~LayerExecutor() = default;
  virtual std::int64_t parameter_floats() const { return 0; }
  // Initial values, the same on every rank (drawn from `seed` and the layer's index).
  virtual void initialize(std::uint64_t /*seed*/, std::span<float> /*host_parameters*/) const {}
  void bind_parameters(float* weights, float* gradients) {
    weights_ = weights;
    gradients_ = gradients;
  }
  virtual void forward(const std::vector<const float*>& x, float* y) = 0;
  // Writes the parameter gradients (overwritten) and the wanted input gradients.
  virtual void backward(const std::vector<const float*>& x, const float* y, const float* dy,
                        const std::vector<float*>& dx) = 0;
  // The loss of the last forward (loss layers only).
  virtual double loss() const { return 0; }

 protected:
  float* weights_ = nullptr;
  float* gradients_ = nullptr;
};

// Throws std::invalid_argument naming the layer when the real backend cannot run it (yet).
std::unique_ptr<LayerExecutor> make_layer_executor(const ResolvedLayer& layer, std::size_t index,
                                                   bool spatially_split, const LocalShapes& shapes,
                                                   ExecutionContext& context);

// Uniform values in [-bound, bound) from a counter-based generator (identical on every platform
// and rank).
void fill_uniform(std::uint64_t seed, std::uint64_t stream, float bound, std::span<float> values);
std::uint64_t mix_seed(std::uint64_t a, std::uint64_t b);

}  // namespace tessera::kernels::real
