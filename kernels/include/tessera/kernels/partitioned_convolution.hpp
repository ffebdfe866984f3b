#pragma once
// A convolution whose input and output are split over a spatial grid of shards (Oyama et al.'s
// hybrid-parallel CosmoFlow; LBANN's Distconv), on any Device and over any HaloExchange.
//
// Forward: the boundary's zero padding sits in the shard's halo buffer and the kernels run
// unpadded on exact windows. The outputs that read only the shard's own planes (the interior) are
// computed while the first axis's halos are in flight, then the boundary slabs. The kernels take
// dense tensors, so the interior and the slabs are staged through copies; as in the reference
// runtime, a shard skips the overlap and runs one kernel after the exchange when a split axis
// holds fewer than 3 window reaches of planes (HaloOverlap::automatic).
//
// Backward-data is the exact adjoint of the forward's halo fill: each shard runs the kernel's
// backward-data over its whole haloed window from its own output gradient alone, then the
// gradient that landed in halo regions is sent back and added into the neighbours' own planes
// (HaloDirection::add_adjoint). This reuses the forward's windows and messages unchanged; the
// alternative, exchanging output-gradient halos, needs a second, transposed window per shard and a
// wider input halo for the corners of strided windows. The messages carry input channels instead
// of output channels. Backward-filter is local on the haloed input kept from forward and runs
// while the gradient halos fly; the partial filter gradients are summed over the spatial group.
#include <cstdint>
#include <memory>
#include <vector>

#include "tessera/core/strategy/shard_window.hpp"
#include "tessera/kernels/convolution_kernels.hpp"
#include "tessera/kernels/halo_exchange.hpp"

namespace tessera::kernels {

class ConvolutionRunner;
class HaloExchange;
class WindowShards;

// Whether backward sums the filter gradient over the spatial group (each shard gets the layer's
// gradient) or leaves each shard its own planes' part (for a caller that sums them later, e.g. in
// one all-reduce with other gradients).
enum class FilterGradients { summed_over_shards, per_shard };

enum class HaloOverlap {
  automatic,  // interior during the exchange where each split axis holds >= 3 window reaches
  always,     // interior during the exchange whenever there is one
  never,      // exchange, then one kernel per shard
};

// Which outputs forward_outputs computes: the interior (those that need no halo, where the
// overlap policy computes it during the exchange), the boundary (the rest), or all of them.
enum class OutputPart { whole, interior, boundary };

class PartitionedConvolution {
 public:
  // `whole` is the unpartitioned convolution (not transposed, output_spatial as with_output()
  // gives); its input and output are split over `grid` (one entry per spatial axis). Throws
  // std::invalid_argument when they cannot be (see WindowPlan). The window kernels go through
  // `runner` (plans it follows apply to them; a runner of the exchange's device by default).
  PartitionedConvolution(HaloExchange& exchange, const ConvolutionGeometry& whole,
                         std::vector<std::int64_t> grid, std::int64_t batch,
                         HaloOverlap overlap = HaloOverlap::automatic,
                         FilterGradients filter_gradients = FilterGradients::summed_over_shards,
                         std::unique_ptr<ConvolutionRunner> runner = {});
  ~PartitionedConvolution();
  PartitionedConvolution(const PartitionedConvolution&) = delete;
  PartitionedConvolution& operator=(const PartitionedConvolution&) = delete;

  const WindowPlan& plan() const;
  // The runner its windows run on (and the plans they follow).
  const ConvolutionRunner& runner() const { return *runner_; }

  // One entry per shard the exchange holds locally, in its order: x[i] is batch x in_channels x
  // the shard's input planes (plan().shard(s).owned), y[i] batch x out_channels x its outputs.
  // w is the whole filter.
  void forward(const std::vector<const float*>& x, const float* w, const std::vector<float*>& y);
  // Against the input of the last forward(). dx may be empty (no input gradient wanted); each
  // dw[i] receives the filter's gradient (overwritten), summed over the spatial group or the
  // shard's part as FilterGradients says.
  void backward(const std::vector<const float*>& dy, const float* w, const std::vector<float*>& dx,
                const std::vector<float*>& dw);

  // forward() and backward() in phases, for a caller that orders them itself with other work in
  // between (the real backend playing the step program): forward is load_inputs, one start_halo
  // and finish_halo per exchanged axis (fill, axes in increasing order), the outputs' parts;
  // backward is backward_data, the adjoint exchanges (decreasing order), backward_filter,
  // store_input_gradients, then sum_filter_gradients where the gradients are summed.
  void load_inputs(const std::vector<const float*>& x);
  void start_halo(HaloDirection direction, int axis);
  void finish_halo();
  void forward_outputs(OutputPart part, const std::vector<const float*>& x, const float* w,
                       const std::vector<float*>& y);
  // Into the shards' haloed gradient buffers, which the adjoint exchanges then carry.
  void backward_data(const std::vector<const float*>& dy, const float* w);
  // Each shard's own part of the filter gradient (overwritten), from the input of the last
  // forward.
  void backward_filter(const std::vector<const float*>& dy, const std::vector<float*>& dw);
  void store_input_gradients(const std::vector<float*>& dx);
  void sum_filter_gradients(const std::vector<float*>& dw);

 private:
  ConvolutionGeometry window_geometry(const SpatialBox& window, const SpatialBox& outputs) const;
  void forward_box(std::size_t local, const SpatialBox& outputs, const float* x, const float* w,
                   float* y);
  bool overlaps(const ShardWindow& shard) const;

  ConvolutionGeometry whole_;
  HaloOverlap overlap_;
  FilterGradients filter_gradients_;
  std::unique_ptr<WindowShards> shards_;
  std::unique_ptr<ConvolutionRunner> runner_;
  std::vector<float*> gradient_buffers_;  // of the backward in progress
  struct Scratches;
  std::unique_ptr<Scratches> scratch_;
};

}  // namespace tessera::kernels
