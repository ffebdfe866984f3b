#include "cpu/cpu_device.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>

#include "counter_random.hpp"

namespace tessera::kernels {
namespace {

constexpr std::size_t alignment_bytes = 64;  // a cache line, and what AVX-512 loads prefer

DeviceInfo this_cpu() {
  DeviceInventory inventory;
  add_cpu_devices(inventory);
  return inventory.devices.at(0);
}

class HostMemory final : public DeviceMemory {
 public:
  HostMemory(float* data, std::size_t bytes, std::shared_ptr<CpuDevice::Accounting> accounting)
      : data_(data), bytes_(bytes), accounting_(std::move(accounting)) {}
  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;
  ~HostMemory() override {
    std::free(data_);
    if (accounting_) accounting_->in_use_bytes -= bytes_;
  }
  float* data() override { return data_; }
  std::size_t bytes() const override { return bytes_; }

 private:
  float* data_;
  std::size_t bytes_;
  std::shared_ptr<CpuDevice::Accounting> accounting_;
};

}  // namespace

CpuDevice::CpuDevice(double capacity_bytes)
    : info_(this_cpu()),
      accounting_(std::make_shared<Accounting>()),
      engine_(dnnl::engine::kind::cpu, 0),
      stream_(engine_),
      convolutions_(engine_, stream_) {
  accounting_->capacity_bytes = static_cast<std::size_t>(capacity_bytes);
}

CpuDevice::CpuDevice() : CpuDevice(this_cpu().memory_bytes) {}

double CpuDevice::memory_share_bytes(int ranks_on_this_machine) {
  return this_cpu().memory_bytes / std::max(1, ranks_on_this_machine);
}

std::unique_ptr<DeviceMemory> CpuDevice::allocate(std::size_t bytes) {
  // Reserve first, so that concurrent allocations cannot both pass the check.
  const std::size_t before = accounting_->in_use_bytes.fetch_add(bytes);
  const auto refuse = [&] {
    accounting_->in_use_bytes -= bytes;
    const std::size_t free_bytes =
        accounting_->capacity_bytes - std::min(before, accounting_->capacity_bytes);
    throw OutOfDeviceMemory(static_cast<double>(bytes), static_cast<double>(free_bytes),
                            "the CPU (" + info_.name + ")");
  };
  if (bytes > accounting_->capacity_bytes || before > accounting_->capacity_bytes - bytes) {
    refuse();
  }
  // aligned_alloc needs a size that is a multiple of the alignment (and gives no pointer for 0).
  const std::size_t rounded_bytes = std::max<std::size_t>(
      alignment_bytes, (bytes + alignment_bytes - 1) / alignment_bytes * alignment_bytes);
  auto* data = static_cast<float*>(std::aligned_alloc(alignment_bytes, rounded_bytes));
  if (data == nullptr) refuse();
  const std::size_t now = before + bytes;
  for (std::size_t peak = accounting_->peak_bytes.load();
       now > peak && !accounting_->peak_bytes.compare_exchange_weak(peak, now);) {
  }
  return std::make_unique<HostMemory>(data, bytes, accounting_);
}

std::unique_ptr<DeviceMemory> CpuDevice::allocate_pinned_host(std::size_t bytes) {
  // Host memory beside what the device may hold: outside the capacity (memory.device_capacity
  // stands for a GPU's memory, and offloaded feature maps leave it).
  const std::size_t rounded_bytes = std::max<std::size_t>(
      alignment_bytes, (bytes + alignment_bytes - 1) / alignment_bytes * alignment_bytes);
  auto* data = static_cast<float*>(std::aligned_alloc(alignment_bytes, rounded_bytes));
  if (data == nullptr) throw std::bad_alloc();
  return std::make_unique<HostMemory>(data, bytes, nullptr);
}

void CpuDevice::copy_to_host_async(const float* device, float* host, std::size_t floats) {
  copy_on_device(device, host, floats);
}

void CpuDevice::copy_to_device_async(const float* host, float* device, std::size_t floats) {
  copy_on_device(host, device, floats);
}

void CpuDevice::copy_to_device(const float* host, float* device, std::size_t floats) {
  copy_on_device(host, device, floats);
}

void CpuDevice::copy_to_host(const float* device, float* host, std::size_t floats) {
  copy_on_device(device, host, floats);
}

void CpuDevice::copy_on_device(const float* from, float* to, std::size_t floats) {
  if (floats > 0) std::memmove(to, from, floats * sizeof(float));
}

void CpuDevice::fill(float* device, std::size_t floats, float value) {
  std::fill_n(device, floats, value);
}

void CpuDevice::fill_uniform(float* device, std::size_t floats, std::uint64_t seed) {
  for (std::size_t index = 0; index < floats; ++index) device[index] = counter_uniform(seed, index);
}

void CpuDevice::synchronize() {
  stream_.wait();
}

double CpuDevice::time_seconds(const std::function<void()>& work) {
  synchronize();
  const auto start = std::chrono::steady_clock::now();
  work();
  synchronize();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::unique_ptr<Device> open_cpu_device() {
  return std::make_unique<CpuDevice>();
}

std::unique_ptr<Device> open_cpu_device(double capacity_bytes) {
  return std::make_unique<CpuDevice>(capacity_bytes);
}

double cpu_memory_share_bytes(int ranks_on_this_machine) {
  return CpuDevice::memory_share_bytes(ranks_on_this_machine);
}

}  // namespace tessera::kernels
