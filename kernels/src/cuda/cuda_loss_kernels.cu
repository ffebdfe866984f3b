#include <cub/block/block_reduce.cuh>

#include "cuda/cuda_for_each.cuh"
#include "cuda/cuda_loss_kernels.hpp"

namespace tessera::kernels::cuda {
namespace {

struct Maximum {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

// Classification (one position per sample, classes up to the thousands): one block per sample,
// the maximum logit first (stability), then the partition function in double, then the gradient.
__global__ void softmax_cross_entropy_per_sample(std::int64_t classes, const float* logits,
                                                 const std::int32_t* labels, float* dlogits,
                                                 float gradient_scale, double* partials) {
  const std::int64_t sample = blockIdx.x;
  const float* row = logits + sample * classes;
  using MaxReduce = cub::BlockReduce<float, kThreadsPerBlock>;
  using SumReduce = cub::BlockReduce<double, kThreadsPerBlock>;
  __shared__ typename MaxReduce::TempStorage max_storage;
  __shared__ typename SumReduce::TempStorage sum_storage;
  __shared__ float row_max;
  __shared__ double partition;

  float local_max = -INFINITY;
  for (std::int64_t c = threadIdx.x; c < classes; c += blockDim.x)
    local_max = fmaxf(local_max, row[c]);
  const float block_max = MaxReduce(max_storage).Reduce(local_max, Maximum{});
  if (threadIdx.x == 0) row_max = block_max;
  __syncthreads();

  double local_sum = 0;
  for (std::int64_t c = threadIdx.x; c < classes; c += blockDim.x)
    local_sum += exp(static_cast<double>(row[c]) - row_max);
  const double block_sum = SumReduce(sum_storage).Sum(local_sum);
  if (threadIdx.x == 0) partition = block_sum;
  __syncthreads();

  const std::int32_t label = labels[sample];
  for (std::int64_t c = threadIdx.x; dlogits != nullptr && c < classes; c += blockDim.x) {
    const double probability = exp(static_cast<double>(row[c]) - row_max) / partition;
    dlogits[sample * classes + c] =
        static_cast<float>((probability - (c == label ? 1.0 : 0.0)) * gradient_scale);
  }
  if (threadIdx.x == 0) {
    partials[sample] =
        log(partition) + static_cast<double>(row_max) - static_cast<double>(row[label]);
  }
}

// Segmentation (a label per voxel, a few classes): one thread per position, its classes strided
// by the positions; the block's losses summed into its partial sum.
__global__ void softmax_cross_entropy_per_position(std::int64_t batch, std::int64_t classes,
                                                   std::int64_t positions, const float* logits,
                                                   const std::int32_t* labels, float* dlogits,
                                                   float gradient_scale, double* partials) {
  const std::int64_t count = batch * positions;
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  double local = 0;
  for (std::int64_t index = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       index < count; index += step) {
    const std::int64_t sample = index / positions, position = index % positions;
    const float* first = logits + sample * classes * positions + position;
    float maximum = first[0];
    for (std::int64_t c = 1; c < classes; ++c) maximum = fmaxf(maximum, first[c * positions]);
    double partition = 0;
    for (std::int64_t c = 0; c < classes; ++c)
      partition += exp(static_cast<double>(first[c * positions]) - maximum);
    const std::int32_t label = labels[index];
    local += log(partition) + static_cast<double>(maximum) -
             static_cast<double>(first[label * positions]);
    if (dlogits == nullptr) continue;
    float* gradient = dlogits + sample * classes * positions + position;
    for (std::int64_t c = 0; c < classes; ++c) {
      const double probability =
          exp(static_cast<double>(first[c * positions]) - maximum) / partition;
      gradient[c * positions] =
          static_cast<float>((probability - (c == label ? 1.0 : 0.0)) * gradient_scale);
    }
  }
  using Reduce = cub::BlockReduce<double, kThreadsPerBlock>;
  __shared__ typename Reduce::TempStorage storage;
  const double block_sum = Reduce(storage).Sum(local);
  if (threadIdx.x == 0) partials[blockIdx.x] = block_sum;
}

__global__ void mean_squared_error(std::int64_t count, const float* prediction, const float* target,
                                   float* dprediction, double* partials) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const float gradient_scale = static_cast<float>(2.0 / static_cast<double>(count));
  double local = 0;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += step) {
    const float difference = prediction[i] - target[i];
    if (dprediction != nullptr) dprediction[i] = gradient_scale * difference;
    local += static_cast<double>(difference) * difference;
  }
  using Reduce = cub::BlockReduce<double, kThreadsPerBlock>;
  __shared__ typename Reduce::TempStorage storage;
  const double block_sum = Reduce(storage).Sum(local);
  if (threadIdx.x == 0) partials[blockIdx.x] = block_sum;
}

// One block adds `count` partial sums to *sum, in an order fixed by the count alone: atomic adds,
// in whatever order the blocks finish, changed the loss's last bits run to run.
__global__ void add_partials(std::int64_t count, const double* partials, double* sum) {
  double local = 0;
  for (std::int64_t i = threadIdx.x; i < count; i += blockDim.x) local += partials[i];
  using Reduce = cub::BlockReduce<double, kThreadsPerBlock>;
  __shared__ typename Reduce::TempStorage storage;
  const double total = Reduce(storage).Sum(local);
  if (threadIdx.x == 0) *sum += total;
}

void launch_add_partials(std::int64_t count, const double* partials, double* sum,
                         cudaStream_t stream) {
  add_partials<<<1, kThreadsPerBlock, 0, stream>>>(count, partials, sum);
  TESSERA_CUDA_CHECK(cudaGetLastError());
}

unsigned int per_position_blocks(std::int64_t count) {
  return std::min(grid_blocks(count), 1024u);
}

}  // namespace

std::int64_t softmax_cross_entropy_partials(std::int64_t batch, std::int64_t positions) {
  return positions == 1 ? batch : per_position_blocks(batch * positions);
}

std::int64_t mse_partials(std::int64_t count) {
  return per_position_blocks(count);
}

void launch_softmax_cross_entropy(std::int64_t batch, std::int64_t classes, std::int64_t positions,
                                  const float* logits, const std::int32_t* labels, float* dlogits,
                                  float gradient_scale, double* loss_sum, double* partials,
                                  cudaStream_t stream) {
  if (batch <= 0 || classes <= 0 || positions <= 0) return;
  if (positions == 1) {
    softmax_cross_entropy_per_sample<<<static_cast<unsigned int>(batch), kThreadsPerBlock, 0,
                                       stream>>>(classes, logits, labels, dlogits, gradient_scale,
                                                 partials);
  } else {
    softmax_cross_entropy_per_position<<<per_position_blocks(batch * positions), kThreadsPerBlock,
                                         0, stream>>>(batch, classes, positions, logits, labels,
                                                      dlogits, gradient_scale, partials);
  }
  TESSERA_CUDA_CHECK(cudaGetLastError());
  launch_add_partials(softmax_cross_entropy_partials(batch, positions), partials, loss_sum, stream);
}

void launch_mse(std::int64_t count, const float* prediction, const float* target,
                float* dprediction, double* loss_sum, double* partials, cudaStream_t stream) {
  if (count <= 0) return;
  mean_squared_error<<<per_position_blocks(count), kThreadsPerBlock, 0, stream>>>(
      count, prediction, target, dprediction, partials);
  TESSERA_CUDA_CHECK(cudaGetLastError());
  launch_add_partials(mse_partials(count), partials, loss_sum, stream);
}

}  // namespace tessera::kernels::cuda
