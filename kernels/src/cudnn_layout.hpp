#pragma once
// How a convolution or pooling problem becomes the dims and strides of cuDNN descriptors.
// Host-only (no CUDA headers), so it is tested on machines without the toolkit.
//
// cuDNN describes every convolution as a plain one, x -> y with filter w: a transposed layer is
// the plain convolution from the layer's output to its input (its forward pass is cuDNN's
// backward-data), so `conv_input` below is a transposed layer's output and vice versa. cuDNN needs
// at least two spatial axes: a 1D problem gets a leading unit H axis.
#include <cstdint>
#include <vector>

#include "tessera/kernels/convolution_kernels.hpp"
#include "tessera/kernels/layer_kernels.hpp"

namespace tessera::kernels {

struct CudnnTensorLayout {
  std::vector<int> dims;     // N, C, (D,) H, W
  std::vector<int> strides;  // fully packed, W fastest
};

struct CudnnConvolutionLayout {
  CudnnTensorLayout conv_input;
  CudnnTensorLayout conv_output;
  std::vector<int> filter_dims;  // K (conv output channels), C / groups, (D,) H, W
  std::vector<int> padding;      // per spatial axis, as many as the tensors have
  std::vector<int> stride;
  std::vector<int> dilation;
  int groups = 1;
};

// Throws std::invalid_argument naming what is inconsistent (axis counts, channels not divisible
// by groups, output extents that are not the convolution's, sizes beyond cuDNN's int range).
CudnnConvolutionLayout cudnn_convolution_layout(const ConvolutionGeometry& geometry,
                                                std::int64_t batch);

// cuDNN pads both sides alike and rounds the output down. A max pooling in ceil mode (GoogLeNet's,
// Caffe's rounding) has one output more on some axes: cuDNN would pool a copy of the input padded
// on the high side of those axes (`padded_input`, the extra cells -inf), whose floor output is the
// ceil one; the layout checks a geometry's extents that way, and the CUDA backend runs max pooling
// with kernels of its own that read ceil-mode windows directly (cuda_max_pooling_kernels.hpp). An
// average pooling in ceil mode is refused: cuDNN would count the copy's extra cells.
struct CudnnPoolingLayout {
  CudnnTensorLayout input;
  CudnnTensorLayout padded_input;  // equals input where no axis rounds up
  CudnnTensorLayout output;
  std::vector<int> window;
  std::vector<int> padding;
  std::vector<int> stride;
  bool needs_padded_copy() const { return padded_input.dims != input.dims; }
};

CudnnPoolingLayout cudnn_pooling_layout(const PoolingGeometry& geometry, std::int64_t batch);

// Packed N, C, spatial... (1D padded to 2D) as cuDNN tensor dims and strides.
CudnnTensorLayout cudnn_packed_layout(std::int64_t batch, std::int64_t channels,
                                      const std::vector<std::int64_t>& spatial);

}  // namespace tessera::kernels
