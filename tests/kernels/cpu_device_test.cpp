// The host CPU as a Device: aligned, accounted allocations and "does not fit" as an exception.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include "cpu/cpu_device.hpp"
#include "tessera/kernels/device.hpp"

namespace tessera::kernels {
namespace {

constexpr std::size_t kib = 1024;

TEST(CpuDevice, AccountsForLiveAllocationsAndRefusesWhatDoesNotFit) {
  CpuDevice device(1024.0 * kib);
  EXPECT_EQ(device.bytes_in_use(), 0.0);
  auto half = device.allocate(512 * kib);
  auto quarter = device.allocate(256 * kib);
  EXPECT_EQ(device.bytes_in_use(), 768.0 * kib);
  try {
    device.allocate(300 * kib);
    FAIL() << "300 KiB fitted in the 256 KiB left";
  } catch (const OutOfDeviceMemory& error) {
    EXPECT_EQ(error.requested_bytes(), 300.0 * kib);
    EXPECT_EQ(error.available_bytes(), 256.0 * kib);
  }
  EXPECT_EQ(device.bytes_in_use(), 768.0 * kib) << "a refused allocation leaves nothing behind";
  half.reset();
  EXPECT_EQ(device.bytes_in_use(), 256.0 * kib);
  auto again = device.allocate(700 * kib);
  EXPECT_EQ(device.bytes_in_use(), 956.0 * kib);
  // The most in use at once, until reset to what is in use now.
  EXPECT_EQ(device.peak_bytes_in_use(), 956.0 * kib);
  again.reset();
  EXPECT_EQ(device.peak_bytes_in_use(), 956.0 * kib);
  device.reset_peak_bytes_in_use();
  EXPECT_EQ(device.peak_bytes_in_use(), 256.0 * kib);
}

TEST(CpuDevice, AnImpossibleAllocationIsOutOfDeviceMemory) {
  auto device = open_cpu_device();
  EXPECT_EQ(device->info().kind, "cpu");
  EXPECT_GT(device->info().memory_bytes, 0);
  const auto more_than_the_machine = static_cast<std::size_t>(device->info().memory_bytes * 2);
  try {
    device->allocate(more_than_the_machine);
    FAIL() << "allocated twice the machine's memory";
  } catch (const OutOfDeviceMemory& error) {
    EXPECT_NE(std::string(error.what()).find("does not fit"), std::string::npos) << error.what();
  }
  EXPECT_THROW(device->allocate(SIZE_MAX), OutOfDeviceMemory);
}

TEST(CpuDevice, AllocationsAre64ByteAlignedEvenWhenEmpty) {
  auto device = open_cpu_device();
  for (std::size_t bytes : {std::size_t{0}, std::size_t{4}, std::size_t{100}, 3 * kib}) {
    auto memory = device->allocate(bytes);
    ASSERT_NE(memory->data(), nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(memory->data()) % 64, 0u) << bytes;
    EXPECT_EQ(memory->bytes(), bytes);
  }
}

TEST(CpuDevice, MemoryOutlivingTheDeviceIsStillFreedCleanly) {
  std::unique_ptr<DeviceMemory> memory;
  {
    auto device = open_cpu_device();
    memory = device->allocate(64);
  }
  memory->data()[0] = 1.0f;  // still valid; ASan checks the free below
  memory.reset();
}

TEST(CpuDevice, CopiesAndFills) {
  auto device = open_cpu_device();
  const std::vector<float> host{1, 2, 3, 4, 5};
  auto a = device->allocate(host.size() * sizeof(float));
  auto b = device->allocate_pinned_host(host.size() * sizeof(float));
  device->copy_to_device(host.data(), a->data(), host.size());
  device->copy_on_device(a->data(), b->data(), host.size());
  std::vector<float> back(host.size());
  device->copy_to_host(b->data(), back.data(), back.size());
  EXPECT_EQ(back, host);
  device->fill(a->data(), a->floats(), -2.5f);
  device->copy_to_host(a->data(), back.data(), back.size());
  EXPECT_EQ(back, std::vector<float>(host.size(), -2.5f));
}

TEST(CpuDevice, FillsUniformValuesThatDependOnSeedAndIndexAlone) {
  auto device = open_cpu_device();
  constexpr std::size_t floats = 100000;
  auto first = device->allocate(floats * sizeof(float));
  auto again = device->allocate(floats * sizeof(float));
  auto other_seed = device->allocate(floats * sizeof(float));
  auto prefix = device->allocate(10 * sizeof(float));
  device->fill_uniform(first->data(), floats, 7);
  device->fill_uniform(again->data(), floats, 7);
  device->fill_uniform(other_seed->data(), floats, 8);
  device->fill_uniform(prefix->data(), 10, 7);
  double sum = 0;
  std::size_t equal_to_other_seed = 0;
  for (std::size_t i = 0; i < floats; ++i) {
    const float value = first->data()[i];
    ASSERT_GE(value, -1.0f) << i;
    ASSERT_LT(value, 1.0f) << i;
    ASSERT_EQ(value, again->data()[i]) << i;
    if (i < 10) {
      ASSERT_EQ(value, prefix->data()[i]) << i;
    }
    equal_to_other_seed += value == other_seed->data()[i];
    sum += value;
  }
  EXPECT_LT(equal_to_other_seed, 10u);
  EXPECT_NEAR(sum / floats, 0.0, 0.01);  // uniform on [-1, 1): standard error 0.0018
  EXPECT_NE(first->data()[0], first->data()[1]);
}

TEST(CpuDevice, TimesWorkWithASteadyClock) {
  auto device = open_cpu_device();
  const double seconds =
      device->time_seconds([] { std::this_thread::sleep_for(std::chrono::milliseconds(20)); });
  EXPECT_GE(seconds, 0.020);
  EXPECT_LT(seconds, 5.0);
}

TEST(CpuDevice, OffersConvolutionsAndLayerKernels) {
  auto device = open_cpu_device();
  const ConvolutionGeometry geometry = with_output({.in_channels = 1,
                                                    .out_channels = 1,
                                                    .input_spatial = {4},
                                                    .kernel = {3},
                                                    .stride = {1},
                                                    .padding = {1},
                                                    .dilation = {1}});
  EXPECT_FALSE(device->convolutions().algorithms(geometry, 1, Direction::forward).empty());
  EXPECT_NE(dynamic_cast<CpuLayerKernels*>(&device->layers()), nullptr);
}

TEST(CpuDevice, RanksOnOneMachineShareItsMemory) {
  const double whole = CpuDevice().info().memory_bytes;
  EXPECT_GT(whole, 0);
  EXPECT_DOUBLE_EQ(CpuDevice::memory_share_bytes(1), whole);
  EXPECT_DOUBLE_EQ(CpuDevice::memory_share_bytes(4), whole / 4);
  EXPECT_DOUBLE_EQ(CpuDevice::memory_share_bytes(0), whole);  // no rank counted: the whole
}

}  // namespace
}  // namespace tessera::kernels
