#pragma once
// Max or average pooling whose input and output are split over a spatial grid of shards, on any
// Device and over any HaloExchange. Zero padding is not neutral here (max; an average excluding
// padding from its count), so the kernel pads itself where a shard's window meets the volume's
// boundary and the outputs that would see padding where there is none are dropped
// (BoundaryPadding::kernel_padding). Forward fills the halos, then pools each shard's window.
// Backward runs the kernel's backward over the whole window with the dropped outputs' gradients
// zero, then adds the halo regions' gradients back into the neighbours (the adjoint of the fill,
// as for PartitionedConvolution).
#include <cstdint>
#include <memory>
#include <vector>

#include "tessera/core/strategy/shard_window.hpp"
#include "tessera/kernels/halo_exchange.hpp"
#include "tessera/kernels/layer_kernels.hpp"

namespace tessera::kernels {

class HaloExchange;
class WindowShards;

class PartitionedPooling {
 public:
  // `whole`: the unpartitioned pooling, output_spatial filled in.
  PartitionedPooling(HaloExchange& exchange, const PoolingGeometry& whole,
                     std::vector<std::int64_t> grid, std::int64_t batch);
  ~PartitionedPooling();
  PartitionedPooling(const PartitionedPooling&) = delete;
  PartitionedPooling& operator=(const PartitionedPooling&) = delete;

  const WindowPlan& plan() const;
  // Per local shard as in PartitionedConvolution: x[i] over plan().shard(s).owned, y[i] over
  // its outputs.
  void forward(const std::vector<const float*>& x, const std::vector<float*>& y);
  // Against the input and output of the last forward().
  void backward(const std::vector<const float*>& dy, const std::vector<float*>& dx);

  // The same in phases, for a caller ordering them itself (the real backend playing the step
  // program): forward is load_inputs, one start_halo and finish_halo per axis (fill, increasing
  // order), forward_outputs; backward is backward_data, the adjoint exchanges (decreasing order)
  // and store_input_gradients.
  void load_inputs(const std::vector<const float*>& x);
  void start_halo(HaloDirection direction, int axis);
  void finish_halo();
  void forward_outputs(const std::vector<float*>& y);
  void backward_data(const std::vector<const float*>& dy);  // into the haloed gradient buffers
  void store_input_gradients(const std::vector<float*>& dx);

 private:
  PoolingGeometry window_geometry(const ShardWindow& shard) const;

  PoolingGeometry whole_;
  std::unique_ptr<WindowShards> shards_;
  std::vector<float*> gradient_buffers_;  // of the backward in progress
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tessera::kernels
