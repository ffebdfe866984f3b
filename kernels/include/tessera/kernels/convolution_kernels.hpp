#pragma once
// Convolutions (2D and 3D, plain and transposed) in the three training directions, with every
// algorithm the device's library offers for a problem and its workspace bytes, run with a chosen
// algorithm. Micro-batched execution (micro_batched_convolution.hpp) and the spatially
// partitioned convolution (partitioned_convolution.hpp) are built on this interface.
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/cost/profile_database.hpp"  // Direction

namespace tessera::kernels {

class DeviceMemory;

// Everything about a convolution except its batch. Per-axis vectors have one entry per spatial
// axis ((D,) H, W). Padding is symmetric (cuDNN has no other); the partitioned convolution
// materialises boundary padding in its halo buffers instead.
struct ConvolutionGeometry {
  bool transposed = false;  // input/output as in the forward pass of the transposed conv
  std::int64_t in_channels = 1;
  std::int64_t out_channels = 1;
  std::int64_t groups = 1;
  std::vector<std::int64_t> input_spatial;
  std::vector<std::int64_t> output_spatial;  // must match the others; see output_extent()
  std::vector<std::int64_t> kernel;
  std::vector<std::int64_t> stride;
  std::vector<std::int64_t> padding;
  std::vector<std::int64_t> dilation;

  std::int64_t input_floats_per_sample() const;
  std::int64_t output_floats_per_sample() const;
  std::int64_t filter_floats() const;  // out x in/groups x kernel (transposed: in x out/groups)
  int spatial_rank() const { return static_cast<int>(input_spatial.size()); }
};

// Output extent of a (non-transposed) convolution along one axis.
std::int64_t output_extent(std::int64_t input, std::int64_t kernel, std::int64_t stride,
                           std::int64_t padding, std::int64_t dilation);
// Geometry with output_spatial computed from the rest (transposed: output = the conv's input).
ConvolutionGeometry with_output(ConvolutionGeometry geometry);

struct ConvolutionAlgorithm {
  std::string name;  // stable across runs: what the profile database and plans store
  double workspace_bytes = 0;
  // The same operands give the same bits run after run (cuDNN reports this per algorithm: some
  // backward ones sum with atomics, in whatever order the threads arrive).
  bool deterministic = true;
};

// Pointers are device memory. Every call computes  result = op(...) + beta * result,  so
// backward_filter with beta = 1 accumulates into the filter gradient.
class ConvolutionKernels {
 public:
  virtual ~ConvolutionKernels() = default;

  // Every algorithm the library has for this problem, direction and batch, each with its
  // workspace bytes; algorithms that cannot run the problem are left out, and so are the
  // non-deterministic ones while keep_deterministic_only is set. The first is the one the library
  // would choose itself.
  std::vector<ConvolutionAlgorithm> algorithms(const ConvolutionGeometry& geometry,
                                               std::int64_t batch, Direction direction);

  // Offer only deterministic algorithms from now on (the scenario's real.deterministic, as
  // PyTorch's torch.backends.cudnn.deterministic), so that training is bit-reproducible.
  void keep_deterministic_only(bool only) { deterministic_only_ = only; }
  bool deterministic_only() const { return deterministic_only_; }

  // y = conv(x, w) + beta * y
  virtual void forward(const ConvolutionGeometry& geometry, std::int64_t batch,
                       const std::string& algorithm, const float* x, const float* w, float* y,
                       float beta, DeviceMemory* workspace) = 0;
  // dx = conv_backward_data(dy, w) + beta * dx
  virtual void backward_data(const ConvolutionGeometry& geometry, std::int64_t batch,
                             const std::string& algorithm, const float* dy, const float* w,
                             float* dx, float beta, DeviceMemory* workspace) = 0;
  // dw = conv_backward_filter(x, dy) + beta * dw
  virtual void backward_filter(const ConvolutionGeometry& geometry, std::int64_t batch,
                               const std::string& algorithm, const float* x, const float* dy,
                               float* dw, float beta, DeviceMemory* workspace) = 0;

 protected:
  // What algorithms() offers before keep_deterministic_only filters it.
  virtual std::vector<ConvolutionAlgorithm> every_algorithm(const ConvolutionGeometry& geometry,
                                                            std::int64_t batch,
                                                            Direction direction) = 0;

 private:
  bool deterministic_only_ = false;
};

}  // namespace tessera::kernels
