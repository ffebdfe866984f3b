#pragma once
// Max pooling element by element, as the CUDA kernels run it (cuda/cuda_max_pooling_kernels.cu)
// and as the host tests run it against the CPU's pooling: one output's maximum, and one input
// cell's gradient gathered from the outputs whose window's first maximum it is. Padding cells
// are left out of a window; the high side holds what the output extent implies (ceil mode).
// Host and device code alike, no CUDA headers.
#include <cstdint>

#include "tessera/kernels/layer_kernels.hpp"

#ifndef TESSERA_HOST_DEVICE
#ifdef __CUDACC__
#define TESSERA_HOST_DEVICE __host__ __device__
#else
#define TESSERA_HOST_DEVICE
#endif
#endif

namespace tessera::kernels {

// One spatial axis; fewer than three axes get leading unit ones.
struct PoolingAxis {
  std::int64_t in = 1;
  std::int64_t out = 1;
  std::int64_t kernel = 1;
  std::int64_t stride = 1;
  std::int64_t padding = 0;  // the low side's
};

struct PoolingWindows {
  PoolingAxis depth, height, width;
  TESSERA_HOST_DEVICE std::int64_t in_volume() const { return depth.in * height.in * width.in; }
  TESSERA_HOST_DEVICE std::int64_t out_volume() const { return depth.out * height.out * width.out; }
};

inline PoolingWindows pooling_windows(const PoolingGeometry& geometry) {
  PoolingAxis axes[3];
  const std::size_t rank = geometry.input_spatial.size();
  for (std::size_t a = 0; a < rank && a < 3; ++a) {
    axes[3 - rank + a] = {geometry.input_spatial[a], geometry.output_spatial[a], geometry.kernel[a],
                          geometry.stride[a], geometry.padding[a]};
  }
  return {axes[0], axes[1], axes[2]};
}

// A flat N C D H W index's plane (n C + c) and position.
struct PoolingCell {
  std::int64_t plane, d, h, w;
};
TESSERA_HOST_DEVICE inline PoolingCell pooling_cell(std::int64_t index, std::int64_t depth,
                                                    std::int64_t height, std::int64_t width) {
  const std::int64_t w = index % width;
  index /= width;
  const std::int64_t h = index % height;
  index /= height;
  return {index / depth, index % depth, h, w};
}

// The input cells [first, end) of output o's window along the axis.
TESSERA_HOST_DEVICE inline void window_cells(const PoolingAxis& axis, std::int64_t o,
                                             std::int64_t& first, std::int64_t& end) {
  const std::int64_t start = o * axis.stride - axis.padding;
  first = start < 0 ? 0 : start;
  end = start + axis.kernel < axis.in ? start + axis.kernel : axis.in;
}

// The outputs [first, last] whose window holds input cell i along the axis:
// o s - p <= i < o s - p + k.
TESSERA_HOST_DEVICE inline void covering_outputs(const PoolingAxis& axis, std::int64_t i,
                                                 std::int64_t& first, std::int64_t& last) {
  const std::int64_t low = i + axis.padding - axis.kernel + 1;
  first = low <= 0 ? 0 : (low + axis.stride - 1) / axis.stride;
  last = (i + axis.padding) / axis.stride;
  if (last > axis.out - 1) last = axis.out - 1;
}

// y at flat output index `index` (N C D H W order) of input x.
TESSERA_HOST_DEVICE inline float max_pooling_output(const PoolingWindows& windows, const float* x,
                                                    std::int64_t index) {
  const PoolingAxis& height = windows.height;
  const PoolingAxis& width = windows.width;
  const PoolingCell o = pooling_cell(index, windows.depth.out, height.out, width.out);
  const float* plane = x + o.plane * windows.in_volume();
  std::int64_t d0, d1, h0, h1, w0, w1;
  window_cells(windows.depth, o.d, d0, d1);
  window_cells(height, o.h, h0, h1);
  window_cells(width, o.w, w0, w1);
  // Windows are never empty (cudnn_pooling_layout checks the extents); a NaN loses to any
  // number, as in fmax.
  float largest = 0.0f;
  bool seen = false;
  for (std::int64_t d = d0; d < d1; ++d) {
    for (std::int64_t h = h0; h < h1; ++h) {
      const float* row = plane + (d * height.in + h) * width.in;
      for (std::int64_t w = w0; w < w1; ++w) {
        const float value = row[w];
        if (!seen || value > largest || largest != largest) largest = value;
        seen = true;
      }
    }
  }
  return largest;
}

// dx at flat input index `index`: dy summed, in output order, over the outputs whose window's
// first cell (in d, h, w order) holding their maximum y is this one.
TESSERA_HOST_DEVICE inline float max_pooling_input_gradient(const PoolingWindows& windows,
                                                            const float* x, const float* y,
                                                            const float* dy, std::int64_t index) {
  const PoolingAxis& height = windows.height;
  const PoolingAxis& width = windows.width;
  const PoolingCell i = pooling_cell(index, windows.depth.in, height.in, width.in);
  const float* plane = x + i.plane * windows.in_volume();
  const std::int64_t outputs = i.plane * windows.out_volume();
  const std::int64_t cell = (i.d * height.in + i.h) * width.in + i.w;
  std::int64_t od0, od1, oh0, oh1, ow0, ow1;
  covering_outputs(windows.depth, i.d, od0, od1);
  covering_outputs(height, i.h, oh0, oh1);
  covering_outputs(width, i.w, ow0, ow1);
  float sum = 0.0f;
  for (std::int64_t od = od0; od <= od1; ++od) {
    for (std::int64_t oh = oh0; oh <= oh1; ++oh) {
      for (std::int64_t ow = ow0; ow <= ow1; ++ow) {
        const std::int64_t o = outputs + (od * height.out + oh) * width.out + ow;
        std::int64_t d0, d1, h0, h1, w0, w1;
        window_cells(windows.depth, od, d0, d1);
        window_cells(height, oh, h0, h1);
        window_cells(width, ow, w0, w1);
        std::int64_t first = -1;
        for (std::int64_t d = d0; d < d1 && first < 0; ++d) {
          for (std::int64_t h = h0; h < h1 && first < 0; ++h) {
            for (std::int64_t w = w0; w < w1; ++w) {
              const std::int64_t at = (d * height.in + h) * width.in + w;
              if (plane[at] == y[o]) {
                first = at;
                break;
              }
            }
          }
        }
        if (first == cell) sum += dy[o];
      }
    }
  }
  return sum;
}

}  // namespace tessera::kernels
