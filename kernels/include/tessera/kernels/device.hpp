#pragma once
// One compute device the real backend and the profiler run on: a CPU driven by oneDNN or a GPU
// driven by CUDA/cuDNN. Kernels take raw float pointers into memory allocated here (host memory
// on a CPU, device memory on a GPU); tensors are dense float32, NC(D)HW, batch outermost, so a
// micro-batch or a sample is a contiguous slice.
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "tessera/kernels/device_inventory.hpp"

namespace tessera::kernels {

class ConvolutionKernels;
class LayerKernels;
class SequenceKernels;

// A block of memory on a device. Move-only; freed on destruction.
class DeviceMemory {
 public:
  virtual ~DeviceMemory() = default;
  virtual float* data() = 0;
  virtual std::size_t bytes() const = 0;
  std::size_t floats() const { return bytes() / sizeof(float); }
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceInfo& info() const = 0;

  // Throws OutOfDeviceMemory when the device cannot hold `bytes` more.
  virtual std::unique_ptr<DeviceMemory> allocate(std::size_t bytes) = 0;
  // Pinned host memory for the copy stream (plain host memory on a CPU device, not counted
  // against its capacity).
  virtual std::unique_ptr<DeviceMemory> allocate_pinned_host(std::size_t bytes) = 0;
  virtual void copy_to_device(const float* host, float* device, std::size_t floats) = 0;
  virtual void copy_to_host(const float* device, float* host, std::size_t floats) = 0;
  virtual void copy_on_device(const float* from, float* to, std::size_t floats) = 0;
  // The memory stream (vDNN's offload and prefetch): a copy between device memory and pinned host
  // memory that starts after every kernel issued so far and may overlap those issued after it;
  // wait_for_copies() returns when every such copy has finished. A CPU copies at once.
  virtual void copy_to_host_async(const float* device, float* host, std::size_t floats) = 0;
  virtual void copy_to_device_async(const float* host, float* device, std::size_t floats) = 0;
  virtual void wait_for_copies() = 0;
  virtual void fill(float* device, std::size_t floats, float value) = 0;
  // Pseudo-random values in [-1, 1), written where they live: element i depends only on (seed,
  // i), the same bits on every device (kernels/src/counter_random.hpp). For operands whose
  // values do not matter but must not be zeros (profiles, benchmarks).
  virtual void fill_uniform(float* device, std::size_t floats, std::uint64_t seed) = 0;
  // Device memory in use now, and the most in use since the last reset: on a CPU what this device
  // handed out (exact, tracked at every allocation); on a GPU what its stream-ordered memory pool
  // has handed out (every allocation of the program; not CUDA's context nor the libraries' own
  // memory), sampled whenever these are asked.
  virtual double bytes_in_use() = 0;
  virtual double peak_bytes_in_use() = 0;
  virtual void reset_peak_bytes_in_use() = 0;
  // Blocks until every kernel issued so far has finished.
  virtual void synchronize() = 0;
  // Wall time of `work` measured the device's way (CUDA events on a GPU, a steady clock on a
  // CPU), after synchronising before and after.
  virtual double time_seconds(const std::function<void()>& work) = 0;

  virtual ConvolutionKernels& convolutions() = 0;
  virtual LayerKernels& layers() = 0;
  // The recurrent models' kernels; null where the device has none yet (a GPU: cuDNN's RNN is not
  // wired, and the real backend skips recurrent models on GPU ranks).
  virtual SequenceKernels* sequences() { return nullptr; }
};

class OutOfDeviceMemory : public std::runtime_error {
 public:
  OutOfDeviceMemory(double requested_bytes, double available_bytes, const std::string& device);
  double requested_bytes() const { return requested_bytes_; }
  double available_bytes() const { return available_bytes_; }

 private:
  double requested_bytes_;
  double available_bytes_;
};

// The host CPU through oneDNN. Always available.
std::unique_ptr<Device> open_cpu_device();
// The same handing out at most `capacity_bytes` (a CPU rank of the real backend).
std::unique_ptr<Device> open_cpu_device(double capacity_bytes);
// This machine's physical memory divided among `ranks_on_this_machine` ranks, which share it.
double cpu_memory_share_bytes(int ranks_on_this_machine);
// CUDA device `index`; throws std::runtime_error with the reason when there is none or the
// build has no CUDA parts. With `capacity_bytes`, the device acts as one of that much memory: an
// allocation that would take the program's bytes in use (bytes_in_use: its own blocks, as the
// simulator counts them; not CUDA's context nor the libraries' own memory) beyond it throws
// OutOfDeviceMemory (vDNN's memory-capped runs).
std::unique_ptr<Device> open_cuda_device(int index,
                                         std::optional<double> capacity_bytes = std::nullopt);
// "cpu" or "cuda:N" (as `tessera devices` lists them), handing out at most `capacity_bytes` where
// given (a GPU as above).
std::unique_ptr<Device> open_device(const std::string& name,
                                    std::optional<double> capacity_bytes = std::nullopt);

}  // namespace tessera::kernels
