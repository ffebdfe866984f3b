#pragma once
// The host CPU as a Device: 64-byte aligned host memory, accounted against the machine's
// physical memory so that "does not fit" is an OutOfDeviceMemory, not a crash; oneDNN
// convolutions and the CPU layer kernels.
#include <atomic>
#include <cstddef>
#include <memory>

#include <oneapi/dnnl/dnnl.hpp>

#include "cpu/cpu_layer_kernels.hpp"
#include "cpu/cpu_sequence_kernels.hpp"
#include "cpu/onednn_convolutions.hpp"
#include "tessera/kernels/device.hpp"

namespace tessera::kernels {

class CpuDevice final : public Device {
 public:
  // capacity_bytes: how much the device may hand out (the machine's physical memory by default).
  explicit CpuDevice(double capacity_bytes);
  CpuDevice();

  // The machine's physical memory divided among `ranks_on_this_machine` ranks, which share it.
  static double memory_share_bytes(int ranks_on_this_machine);

  const DeviceInfo& info() const override { return info_; }
  std::unique_ptr<DeviceMemory> allocate(std::size_t bytes) override;
  std::unique_ptr<DeviceMemory> allocate_pinned_host(std::size_t bytes) override;
  void copy_to_device(const float* host, float* device, std::size_t floats) override;
  void copy_to_host(const float* device, float* host, std::size_t floats) override;
  void copy_on_device(const float* from, float* to, std::size_t floats) override;
  void copy_to_host_async(const float* device, float* host, std::size_t floats) override;
  void copy_to_device_async(const float* host, float* device, std::size_t floats) override;
  void wait_for_copies() override {}
  double bytes_in_use() override { return static_cast<double>(accounting_->in_use_bytes.load()); }
  double peak_bytes_in_use() override {
    return static_cast<double>(accounting_->peak_bytes.load());
  }
  void reset_peak_bytes_in_use() override {
    accounting_->peak_bytes = accounting_->in_use_bytes.load();
  }
  void fill(float* device, std::size_t floats, float value) override;
  void fill_uniform(float* device, std::size_t floats, std::uint64_t seed) override;
  void synchronize() override;
  double time_seconds(const std::function<void()>& work) override;
  ConvolutionKernels& convolutions() override { return convolutions_; }
  LayerKernels& layers() override { return layers_; }
  SequenceKernels* sequences() override { return &sequences_; }

  // Shared with every allocation so that memory outliving the device still frees cleanly.
  struct Accounting {
    std::atomic<std::size_t> in_use_bytes{0};
    std::atomic<std::size_t> peak_bytes{0};
    std::size_t capacity_bytes = 0;
  };

 private:
  DeviceInfo info_;
  std::shared_ptr<Accounting> accounting_;
  dnnl::engine engine_;
  dnnl::stream stream_;
  onednn::OnednnConvolutions convolutions_;
  CpuLayerKernels layers_;
  CpuSequenceKernels sequences_;
};

}  // namespace tessera::kernels
