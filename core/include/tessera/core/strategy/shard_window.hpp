#pragma once
// What one shard of a spatially partitioned sliding-window layer (convolution or pooling) reads:
// its own input planes, the halo planes its neighbours send (tessera::shard_window_halo, the
// core's exact per-shard halo, so the simulator and the real run exchange the same planes), and
// the padding at the volume's boundary. Both the input and the output are split over the same
// grid by TensorDistribution's rule. The kernels run these windows (kernels/
// partitioned_convolution.hpp); core times and plans the same ones (window_kernels.hpp).
#include <cstdint>
#include <vector>

#include "tessera/core/model/layer.hpp"
#include "tessera/core/strategy/parallel_strategy.hpp"
#include "tessera/core/strategy/tensor_distribution.hpp"

namespace tessera {

struct WindowAxis {
  std::int64_t kernel = 1;
  std::int64_t stride = 1;
  std::int64_t padding = 0;
  std::int64_t dilation = 1;
  std::int64_t reach() const { return dilation * (kernel - 1) + 1; }
};

// How the boundary padding reaches the kernel.
enum class BoundaryPadding {
  // Zeros in the shard's buffer; the kernel runs unpadded, so it computes exactly the shard's
  // outputs (convolution: a zero input contributes nothing).
  zeros_in_buffer,
  // The kernel's own symmetric padding where the window meets the volume's boundary (pooling:
  // zeros are not neutral for max, nor for an average that excludes padding from its count).
  // Outputs that would read padding where there is none are computed and dropped; the window
  // starts at a plane aligned to the stride so that the kept outputs are the true ones.
  kernel_padding,
};

struct ShardWindow {
  SpatialBox owned;        // input planes the shard holds (global coordinates)
  SpatialBox outputs;      // output planes it computes
  std::vector<Halo> halo;  // planes received from the lower/upper neighbour, per axis
  SpatialBox window;       // input planes the kernel reads (may reach into the padding)
  SpatialBox buffer;       // owned + window: the shard's haloed input buffer
  std::vector<std::int64_t> kernel_padding;  // per axis, the padding the kernel runs with
  SpatialBox kernel_outputs;  // what the kernel computes on `window`, in output coordinates
  // The neighbour planes received along `axis` from `side` in a face exchange done in axis
  // order: across every axis before it the whole buffer (its halos are there by then, so edges
  // and corners travel on), across later ones the owned planes. Empty when nothing is received.
  std::vector<SpatialBox> lower_halo_region;  // per axis
  std::vector<SpatialBox> upper_halo_region;
  const SpatialBox& halo_region(int axis, Side side) const {
    return side == Side::lower ? lower_halo_region[axis] : upper_halo_region[axis];
  }
  // Input planes present before any halo arrives (owned planes, plus the padding side of axes
  // whose boundary is the volume's): outputs reading only these can be computed during the
  // exchange.
  SpatialBox ready_before_exchange;
};

class WindowPlan {
 public:
  // kind: convolution or pooling (transposed convolutions are not partitioned here). Throws
  // std::invalid_argument when the grid does not fit (a shard without output planes, or a halo
  // wider than the neighbouring shard).
  WindowPlan(LayerKind kind, const TensorDistribution& input, std::vector<WindowAxis> axes,
             BoundaryPadding padding);

  const TensorDistribution& input() const { return input_; }
  const TensorDistribution& output() const { return output_; }
  const std::vector<WindowAxis>& axes() const { return axes_; }
  BoundaryPadding padding() const { return padding_; }
  const ShardWindow& shard(std::int64_t index) const { return shards_.at(index); }

  // Input planes (global) that the outputs `outputs` read, padding included.
  SpatialBox window_of(const SpatialBox& outputs) const;

 private:
  TensorDistribution input_;
  TensorDistribution output_;
  std::vector<WindowAxis> axes_;
  BoundaryPadding padding_;
  std::vector<ShardWindow> shards_;
};

// Outputs of `shard` that read only planes ready before the exchange (`interior`), and the rest
// of its outputs as disjoint boxes (at most two per axis).
struct OutputSplit {
  SpatialBox interior;
  std::vector<SpatialBox> boundary;
};
OutputSplit split_interior(const WindowPlan& plan, const ShardWindow& shard);
// No interior: the whole shard is one boundary box, computed after the exchange.
OutputSplit all_boundary(const ShardWindow& shard);

}  // namespace tessera
