// The split batch-norm of CudaLayerKernels: per-channel statistics travel between host and device
// through the scratch block (cuda_batch_norm_kernels.cu does the element work).
#include <string>

#include "argument_check.hpp"
#include "cuda/cuda_batch_norm_kernels.hpp"
#include "cuda/cuda_check.hpp"
#include "cuda/cuda_layer_kernels.hpp"

namespace tessera::kernels::cuda {
namespace {

BatchNormShape shape_of(std::int64_t batch, std::int64_t channels, std::int64_t spatial,
                        const char* kernel) {
  require_normalization_extents(kernel, batch, channels, spatial, "spatial", 0);
  return {batch, channels, spatial};
}

void require_per_channel(const std::vector<double>& values, std::int64_t channels,
                         const char* kernel, const char* what) {
  require_argument(values.size() == static_cast<std::size_t>(channels), kernel,
                   std::string(what) + " needs one entry per channel (" + std::to_string(channels) +
                       "), got " + std::to_string(values.size()));
}

}  // namespace

ChannelSums CudaLayerKernels::channel_sums_on_host(const double* device_sums,
                                                   std::size_t channels) {
  std::vector<double> both(2 * channels);
  download(device_sums, both.data(), both.size() * sizeof(double));
  ChannelSums sums;
  sums.first.assign(both.begin(), both.begin() + static_cast<std::ptrdiff_t>(channels));
  sums.second.assign(both.begin() + static_cast<std::ptrdiff_t>(channels), both.end());
  return sums;
}

ChannelSums CudaLayerKernels::batch_norm_sums(std::int64_t batch, std::int64_t channels,
                                              std::int64_t spatial, const float* x) {
  const BatchNormShape shape = shape_of(batch, channels, spatial, "batch_norm_sums");
  const auto count = static_cast<std::size_t>(channels);
  context_.make_current();
  double* sums = scratch_doubles(2 * count + static_cast<std::size_t>(batch_norm_partials(shape)));
  TESSERA_CUDA_CHECK(cudaMemsetAsync(sums, 0, 2 * count * sizeof(double), stream()));
  launch_batch_norm_sums(shape, x, sums, sums + 2 * count, stream());
  return channel_sums_on_host(sums, count);
}

void CudaLayerKernels::batch_norm_apply(std::int64_t batch, std::int64_t channels,
                                        std::int64_t spatial, const float* x,
                                        const std::vector<double>& mean,
                                        const std::vector<double>& inv_std, const float* scale,
                                        const float* shift, float* y) {
  constexpr const char* kernel = "batch_norm_apply";
  const BatchNormShape shape = shape_of(batch, channels, spatial, kernel);
  require_per_channel(mean, channels, kernel, "mean");
  require_per_channel(inv_std, channels, kernel, "inv_std");
  const auto count = static_cast<std::size_t>(channels);
  context_.make_current();
  double* statistics = scratch_doubles(2 * count);
  upload(mean.data(), statistics, count * sizeof(double));
  upload(inv_std.data(), statistics + count, count * sizeof(double));
  launch_batch_norm_apply(shape, x, statistics, statistics + count, scale, shift, y, stream());
}

ChannelSums CudaLayerKernels::batch_norm_backward_sums(std::int64_t batch, std::int64_t channels,
                                                       std::int64_t spatial, const float* x,
                                                       const float* dy,
                                                       const std::vector<double>& mean,
                                                       const std::vector<double>& inv_std) {
  constexpr const char* kernel = "batch_norm_backward_sums";
  const BatchNormShape shape = shape_of(batch, channels, spatial, kernel);
  require_per_channel(mean, channels, kernel, "mean");
  require_per_channel(inv_std, channels, kernel, "inv_std");
  const auto count = static_cast<std::size_t>(channels);
  context_.make_current();
  // mean, inv_std, the two sums, then the partial sums
  double* block = scratch_doubles(4 * count + static_cast<std::size_t>(batch_norm_partials(shape)));
  upload(mean.data(), block, count * sizeof(double));
  upload(inv_std.data(), block + count, count * sizeof(double));
  double* sums = block + 2 * count;
  TESSERA_CUDA_CHECK(cudaMemsetAsync(sums, 0, 2 * count * sizeof(double), stream()));
  launch_batch_norm_backward_sums(shape, x, dy, block, block + count, sums, sums + 2 * count,
                                  stream());
  return channel_sums_on_host(sums, count);
}

void CudaLayerKernels::batch_norm_backward_apply(std::int64_t batch, std::int64_t channels,
                                                 std::int64_t spatial, const float* x,
                                                 const float* dy, const std::vector<double>& mean,
                                                 const std::vector<double>& inv_std,
                                                 const float* scale, const ChannelSums& group_sums,
                                                 double group_count, float* dx, float* dscale,
                                                 float* dshift) {
  constexpr const char* kernel = "batch_norm_backward_apply";
  const BatchNormShape shape = shape_of(batch, channels, spatial, kernel);
  require_per_channel(mean, channels, kernel, "mean");
  require_per_channel(inv_std, channels, kernel, "inv_std");
  require_per_channel(group_sums.first, channels, kernel, "group sums");
  require_per_channel(group_sums.second, channels, kernel, "group sums");
  require_argument(group_count > 0.0, kernel,
                   "group element count must be > 0, got " + std::to_string(group_count));
  const auto count = static_cast<std::size_t>(channels);
  context_.make_current();
  double* block = scratch_doubles(4 * count);  // mean, inv_std, sum dy, sum dy x_hat
  upload(mean.data(), block, count * sizeof(double));
  upload(inv_std.data(), block + count, count * sizeof(double));
  upload(group_sums.first.data(), block + 2 * count, count * sizeof(double));
  upload(group_sums.second.data(), block + 3 * count, count * sizeof(double));
  if (dx != nullptr) {
    launch_batch_norm_backward_apply(shape, x, dy, block, block + count, scale, block + 2 * count,
                                     group_count, dx, stream());
  }
  // The parameter gradients are the group sums themselves.
  const std::vector<float> dscale_host(group_sums.second.begin(), group_sums.second.end());
  const std::vector<float> dshift_host(group_sums.first.begin(), group_sums.first.end());
  if (dscale != nullptr) upload(dscale_host.data(), dscale, count * sizeof(float));
  if (dshift != nullptr) upload(dshift_host.data(), dshift, count * sizeof(float));
}

}  // namespace tessera::kernels::cuda
