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

#include "tessera/kernels/layer_kernels.hpp"
#include "tessera/kernels/shard_window.hpp"

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

 private:
  PoolingGeometry window_geometry(const ShardWindow& shard) const;

  PoolingGeometry whole_;
  std::unique_ptr<WindowShards> shards_;
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tessera::kernels
