#include <cub/block/block_reduce.cuh>

#include "cuda/cuda_batch_norm_kernels.hpp"
#include "cuda/cuda_for_each.cuh"

namespace tessera::kernels::cuda {
namespace {

struct ForwardTerms {
  const float* x;
  __device__ void operator()(std::int64_t index, std::int64_t /*channel*/, double& first,
                             double& second) const {
    const double value = x[index];
    first += value;
    second += value * value;
  }
};

struct BackwardTerms {
  const float* x;
  const float* dy;
  const double* mean;
  const double* inv_std;
  __device__ void operator()(std::int64_t index, std::int64_t channel, double& first,
                             double& second) const {
    const double gradient = dy[index];
    first += gradient;
    second += gradient * (x[index] - mean[channel]) * inv_std[channel];
  }
};

// Each thread's (first, second) summed over the block, the sums valid in thread 0.
__device__ void block_sum_pair(double& first, double& second) {
  using Reduce = cub::BlockReduce<double, kThreadsPerBlock>;
  __shared__ typename Reduce::TempStorage storage;
  first = Reduce(storage).Sum(first);
  __syncthreads();  // the storage is reused by the second reduction
  second = Reduce(storage).Sum(second);
}

// Block (x, c) sums a strided share of channel c's batch x spatial elements, reduces in the block
// and writes its two partial sums to partials[(c * blocks + x) * 2 + {0, 1}]: grid.y walks the
// channels, grid.x spreads a channel's elements over enough blocks to fill the GPU when channels
// are few (CosmoFlow's first layers). add_channel_partials then sums them in a fixed order:
// atomic adds, in whatever order the blocks finish, changed the statistics' last bits run to run.
template <class Terms>
__global__ void channel_sums(BatchNormShape shape, Terms terms, double* partials) {
  const std::int64_t channel = blockIdx.y;
  const std::int64_t per_channel = shape.batch * shape.spatial;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  double first = 0;
  double second = 0;
  for (std::int64_t element = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       element < per_channel; element += step) {
    const std::int64_t sample = element / shape.spatial;
    const std::int64_t offset = element - sample * shape.spatial;
    terms((sample * shape.channels + channel) * shape.spatial + offset, channel, first, second);
  }
  block_sum_pair(first, second);
  if (threadIdx.x == 0) {
    double* pair = partials + (channel * gridDim.x + blockIdx.x) * 2;
    pair[0] = first;
    pair[1] = second;
  }
}

// Block c adds channel c's `blocks` pairs of partial sums to sums[c] and sums[channels + c].
__global__ void add_channel_partials(std::int64_t channels, std::int64_t blocks,
                                     const double* partials, double* sums) {
  const std::int64_t channel = blockIdx.x;
  const double* pairs = partials + channel * blocks * 2;
  double first = 0;
  double second = 0;
  for (std::int64_t block = threadIdx.x; block < blocks; block += blockDim.x) {
    first += pairs[block * 2];
    second += pairs[block * 2 + 1];
  }
  block_sum_pair(first, second);
  if (threadIdx.x == 0) {
    sums[channel] += first;
    sums[channels + channel] += second;
  }
}

// About 4 elements per thread, at most 1024 blocks per channel.
std::int64_t blocks_per_channel(const BatchNormShape& shape) {
  const std::int64_t per_channel = shape.batch * shape.spatial;
  return std::clamp<std::int64_t>((per_channel + 4 * kThreadsPerBlock - 1) / (4 * kThreadsPerBlock),
                                  1, 1024);
}

template <class Terms>
void launch_channel_sums(const BatchNormShape& shape, Terms terms, double* sums, double* partials,
                         cudaStream_t stream) {
  if (shape.batch * shape.spatial <= 0 || shape.channels <= 0) return;
  const std::int64_t blocks = blocks_per_channel(shape);
  const dim3 grid(static_cast<unsigned int>(blocks), static_cast<unsigned int>(shape.channels));
  channel_sums<<<grid, kThreadsPerBlock, 0, stream>>>(shape, terms, partials);
  TESSERA_CUDA_CHECK(cudaGetLastError());
  add_channel_partials<<<static_cast<unsigned int>(shape.channels), kThreadsPerBlock, 0, stream>>>(
      shape.channels, blocks, partials, sums);
  TESSERA_CUDA_CHECK(cudaGetLastError());
}

struct Apply {
  BatchNormShape shape;
  const float* x;
  const double* mean;
  const double* inv_std;
  const float* scale;
  const float* shift;
  float* y;
  __device__ void operator()(std::int64_t index) const {
    const std::int64_t c = (index / shape.spatial) % shape.channels;
    const double x_hat = (x[index] - mean[c]) * inv_std[c];
    const double gain = scale != nullptr ? scale[c] : 1.0;
    const double offset = shift != nullptr ? shift[c] : 0.0;
    y[index] = static_cast<float>(gain * x_hat + offset);
  }
};

struct BackwardApply {
  BatchNormShape shape;
  const float* x;
  const float* dy;
  const double* mean;
  const double* inv_std;
  const float* scale;
  const double* group_sums;
  double inverse_count;
  float* dx;
  __device__ void operator()(std::int64_t index) const {
    const std::int64_t c = (index / shape.spatial) % shape.channels;
    const double x_hat = (x[index] - mean[c]) * inv_std[c];
    const double mean_dy = group_sums[c] * inverse_count;
    const double mean_dy_x_hat = group_sums[shape.channels + c] * inverse_count;
    const double gain = (scale != nullptr ? scale[c] : 1.0) * inv_std[c];
    dx[index] = static_cast<float>(gain * (dy[index] - mean_dy - x_hat * mean_dy_x_hat));
  }
};

std::int64_t element_count(const BatchNormShape& shape) {
  return shape.batch * shape.channels * shape.spatial;
}

}  // namespace

std::int64_t batch_norm_partials(const BatchNormShape& shape) {
  return 2 * shape.channels * blocks_per_channel(shape);
}

void launch_batch_norm_sums(const BatchNormShape& shape, const float* x, double* sums,
                            double* partials, cudaStream_t stream) {
  launch_channel_sums(shape, ForwardTerms{x}, sums, partials, stream);
}

void launch_batch_norm_backward_sums(const BatchNormShape& shape, const float* x, const float* dy,
                                     const double* mean, const double* inv_std, double* sums,
                                     double* partials, cudaStream_t stream) {
  launch_channel_sums(shape, BackwardTerms{x, dy, mean, inv_std}, sums, partials, stream);
}

void launch_batch_norm_apply(const BatchNormShape& shape, const float* x, const double* mean,
                             const double* inv_std, const float* scale, const float* shift,
                             float* y, cudaStream_t stream) {
  launch_for_each(element_count(shape), Apply{shape, x, mean, inv_std, scale, shift, y}, stream);
}

void launch_batch_norm_backward_apply(const BatchNormShape& shape, const float* x, const float* dy,
                                      const double* mean, const double* inv_std, const float* scale,
                                      const double* group_sums, double group_count, float* dx,
                                      cudaStream_t stream) {
  launch_for_each(
      element_count(shape),
      BackwardApply{shape, x, dy, mean, inv_std, scale, group_sums, 1.0 / group_count, dx}, stream);
}

}  // namespace tessera::kernels::cuda
