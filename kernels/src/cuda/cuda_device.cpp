// Device on a CUDA GPU: memory from the device's pool in stream order, kernels on one compute
// stream, host transfers on one copy stream, time measured with CUDA events.
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "cuda/cuda_check.hpp"
#include "cuda/cuda_context.hpp"
#include "cuda/cuda_elementwise_kernels.hpp"
#include "cuda/cuda_layer_kernels.hpp"
#include "cuda/cuda_memory.hpp"
#include "cuda/cudnn_convolutions.hpp"
#include "tessera/kernels/device.hpp"

namespace tessera::kernels {
namespace cuda {
namespace {

class CudaEvent {
 public:
  explicit CudaEvent(unsigned int flags) {
    TESSERA_CUDA_CHECK(cudaEventCreateWithFlags(&event_, flags));
  }
  ~CudaEvent() { cudaEventDestroy(event_); }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

DeviceInfo describe_device(int index) {
  DeviceInventory inventory;
  add_cuda_devices(inventory);
  for (const DeviceInfo& device : inventory.devices) {
    if (device.index == index) return device;
  }
  throw std::runtime_error("CUDA device " + std::to_string(index) + " has no properties");
}

class CudaDevice final : public Device {
 public:
  CudaDevice(int index, std::optional<double> capacity_bytes)
      : context_(index),
        info_(describe_device(index)),
        allocation_(std::make_shared<const AllocationContext>(
            AllocationContext{.device_index = index,
                              .capacity_bytes = capacity_bytes.value_or(info_.memory_bytes),
                              .capped = capacity_bytes.has_value(),
                              .stream = context_.compute_stream()})),
        copy_after_compute_(cudaEventDisableTiming),
        convolutions_(context_),
        layers_(context_) {}

  const DeviceInfo& info() const override { return info_; }

  std::unique_ptr<DeviceMemory> allocate(std::size_t bytes) override {
    context_.make_current();
    return std::make_unique<CudaDeviceMemory>(
        bytes, allocation_, "cuda:" + std::to_string(info_.index) + " (" + info_.name + ")");
  }

  std::unique_ptr<DeviceMemory> allocate_pinned_host(std::size_t bytes) override {
    context_.make_current();
    return std::make_unique<PinnedHostMemory>(bytes);
  }

  void copy_to_device(const float* host, float* device, std::size_t floats) override {
    copy_on_copy_stream(device, host, floats, cudaMemcpyHostToDevice);
  }

  void copy_to_host(const float* device, float* host, std::size_t floats) override {
    copy_on_copy_stream(host, device, floats, cudaMemcpyDeviceToHost);
  }

  void copy_to_host_async(const float* device, float* host, std::size_t floats) override {
    copy_on_copy_stream_async(host, device, floats, cudaMemcpyDeviceToHost);
  }

  void copy_to_device_async(const float* host, float* device, std::size_t floats) override {
    copy_on_copy_stream_async(device, host, floats, cudaMemcpyHostToDevice);
  }

  double bytes_in_use() override {
    const double used = device_bytes_in_use(info_.index);
    peak_bytes_ = std::max(peak_bytes_, used);
    return used;
  }

  double peak_bytes_in_use() override {
    bytes_in_use();
    return peak_bytes_;
  }

  void reset_peak_bytes_in_use() override {
    peak_bytes_ = 0;
    bytes_in_use();
  }

  void wait_for_copies() override {
    context_.make_current();
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(context_.copy_stream()));
  }

  void copy_on_device(const float* from, float* to, std::size_t floats) override {
    if (floats == 0) return;
    context_.make_current();
    TESSERA_CUDA_CHECK(cudaMemcpyAsync(to, from, floats * sizeof(float), cudaMemcpyDeviceToDevice,
                                       context_.compute_stream()));
  }

  void fill(float* device, std::size_t floats, float value) override {
    context_.make_current();
    launch_fill(static_cast<std::int64_t>(floats), value, device, context_.compute_stream());
  }

  void fill_uniform(float* device, std::size_t floats, std::uint64_t seed) override {
    context_.make_current();
    launch_fill_uniform(static_cast<std::int64_t>(floats), seed, device, context_.compute_stream());
  }

  void synchronize() override {
    context_.make_current();
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(context_.compute_stream()));
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(context_.copy_stream()));
  }

  double time_seconds(const std::function<void()>& work) override {
    synchronize();
    const CudaEvent start(cudaEventDefault);
    const CudaEvent stop(cudaEventDefault);
    TESSERA_CUDA_CHECK(cudaEventRecord(start.get(), context_.compute_stream()));
    work();
    TESSERA_CUDA_CHECK(cudaEventRecord(stop.get(), context_.compute_stream()));
    TESSERA_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    synchronize();
    float milliseconds = 0;
    TESSERA_CUDA_CHECK(cudaEventElapsedTime(&milliseconds, start.get(), stop.get()));
    return static_cast<double>(milliseconds) * 1e-3;
  }

  ConvolutionKernels& convolutions() override { return convolutions_; }
  LayerKernels& layers() override { return layers_; }

 private:
  // Host transfers complete before returning (the caller's host memory may be pageable and is
  // its own again afterwards) and start after every kernel issued so far, which may produce or
  // still read the device side.
  void copy_on_copy_stream(void* to, const void* from, std::size_t floats, cudaMemcpyKind kind) {
    copy_on_copy_stream_async(to, from, floats, kind);
    TESSERA_CUDA_CHECK(cudaStreamSynchronize(context_.copy_stream()));
  }

  // Pinned host memory on the host side: the copy engine runs beside the compute stream.
  void copy_on_copy_stream_async(void* to, const void* from, std::size_t floats,
                                 cudaMemcpyKind kind) {
    if (floats == 0) return;
    context_.make_current();
    TESSERA_CUDA_CHECK(cudaEventRecord(copy_after_compute_.get(), context_.compute_stream()));
    TESSERA_CUDA_CHECK(cudaStreamWaitEvent(context_.copy_stream(), copy_after_compute_.get(), 0));
    TESSERA_CUDA_CHECK(
        cudaMemcpyAsync(to, from, floats * sizeof(float), kind, context_.copy_stream()));
  }

  CudaContext context_;
  DeviceInfo info_;
  // Destroyed before context_'s streams: blocks that outlive it are then freed synchronously.
  std::shared_ptr<const AllocationContext> allocation_;
  double peak_bytes_ = 0;
  CudaEvent copy_after_compute_;
  CudnnConvolutions convolutions_;
  CudaLayerKernels layers_;
};

}  // namespace
}  // namespace cuda

std::unique_ptr<Device> open_cuda_device(int index, std::optional<double> capacity_bytes) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error(std::string("no CUDA device: ") + cudaGetErrorString(status));
  }
  if (count == 0) throw std::runtime_error("no CUDA device: the runtime sees none");
  if (index < 0 || index >= count) {
    throw std::runtime_error("no CUDA device cuda:" + std::to_string(index) +
                             ": this machine has " + std::to_string(count) +
                             " (cuda:0 to cuda:" + std::to_string(count - 1) + ")");
  }
  if (capacity_bytes && *capacity_bytes <= 0) {
    throw std::invalid_argument("a CUDA device's memory cap must be positive");
  }
  return std::make_unique<cuda::CudaDevice>(index, capacity_bytes);
}

}  // namespace tessera::kernels
