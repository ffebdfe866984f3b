// The CUDA Device: opening (with a clear error where there is no GPU), memory, copies, fill and
// event timing.
#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_test_support.hpp"
#include "tessera/kernels/device.hpp"

namespace tessera::kernels {
namespace {

using CudaDevice = testing::WithCudaDevice<>;

TEST(CudaDeviceOpening, ANonexistentDeviceIsAClearError) {
  try {
    open_cuda_device(4096);
    FAIL() << "cuda:4096 opened";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    // Without a GPU the runtime's reason, without CUDA parts the build's; with GPUs the count.
    const bool explains = message.find("no CUDA device") != std::string::npos ||
                          message.find("no CUDA parts") != std::string::npos;
    EXPECT_TRUE(explains) << message;
  }
  EXPECT_THROW(open_device("cuda:-1"), std::runtime_error);
}

TEST_F(CudaDevice, DescribesItself) {
  EXPECT_EQ(gpu().info().kind, "cuda");
  EXPECT_EQ(gpu().info().index, 0);
  EXPECT_GT(gpu().info().memory_bytes, 0);
  EXPECT_NE(gpu().info().library.find("cuDNN"), std::string::npos);
}

TEST_F(CudaDevice, CopiesRoundTripThroughDeviceMemory) {
  std::vector<float> values(1000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i) * 0.5f - 7.0f;
  auto first = gpu().allocate(values.size() * sizeof(float));
  auto second = gpu().allocate(values.size() * sizeof(float));
  EXPECT_EQ(first->bytes(), values.size() * sizeof(float));
  gpu().copy_to_device(values.data(), first->data(), values.size());
  gpu().copy_on_device(first->data(), second->data(), values.size());
  std::vector<float> back(values.size(), 0.0f);
  gpu().copy_to_host(second->data(), back.data(), back.size());
  EXPECT_EQ(back, values);
}

TEST_F(CudaDevice, FillsAndCopiesThroughPinnedMemory) {
  constexpr std::size_t floats = 3000;  // not a multiple of the block size
  auto device_memory = gpu().allocate(floats * sizeof(float));
  auto pinned = gpu().allocate_pinned_host(floats * sizeof(float));
  gpu().fill(device_memory->data(), floats, 2.5f);
  gpu().copy_to_host(device_memory->data(), pinned->data(), floats);
  for (std::size_t i = 0; i < floats; ++i) ASSERT_EQ(pinned->data()[i], 2.5f) << i;
}

TEST_F(CudaDevice, FillsTheUniformValuesOfTheCpu) {
  constexpr std::size_t floats = (std::size_t{1} << 20) + 3;  // several blocks and a tail
  auto on_gpu = gpu().allocate(floats * sizeof(float));
  gpu().fill(on_gpu->data(), floats, 2.0f);  // outside [-1, 1): every element must be written
  gpu().fill_uniform(on_gpu->data(), floats, 42);
  std::vector<float> back(floats);
  gpu().copy_to_host(on_gpu->data(), back.data(), floats);
  auto cpu = open_cpu_device();
  auto on_cpu = cpu->allocate(floats * sizeof(float));
  cpu->fill_uniform(on_cpu->data(), floats, 42);
  for (std::size_t i = 0; i < floats; ++i) ASSERT_EQ(back[i], on_cpu->data()[i]) << i;
}

TEST_F(CudaDevice, AnImpossibleAllocationSaysHowMuchIsFree) {
  const auto petabyte = std::size_t{1} << 50;
  try {
    gpu().allocate(petabyte);
    FAIL() << "a petabyte fitted";
  } catch (const OutOfDeviceMemory& error) {
    EXPECT_EQ(error.requested_bytes(), static_cast<double>(petabyte));
    EXPECT_GT(error.available_bytes(), 0);
    EXPECT_LE(error.available_bytes(), gpu().info().memory_bytes);
  }
  // The failure leaves the device usable.
  auto small = gpu().allocate(4096);
  gpu().fill(small->data(), small->floats(), 1.0f);
  gpu().synchronize();
}

TEST_F(CudaDevice, ReleasedMemoryLeavesTheCountInUse) {
  constexpr std::size_t bytes = std::size_t{256} << 20;
  {
    // The fill kernel's module and the pool load at their first use: not what is counted here.
    auto warm_up = gpu().allocate(4096);
    gpu().fill(warm_up->data(), warm_up->floats(), 0.0f);
    gpu().synchronize();
  }
  gpu().synchronize();
  const double before = gpu().bytes_in_use();
  for (int round = 0; round < 2; ++round) {  // the second round reuses what the pool kept
    {
      auto block = gpu().allocate(bytes);
      gpu().fill(block->data(), block->floats(), 1.0f);
      gpu().synchronize();
      EXPECT_GE(gpu().bytes_in_use(), before + static_cast<double>(bytes)) << round;
    }
    gpu().synchronize();
    // The pool's page granularity and bookkeeping, not the block.
    EXPECT_NEAR(gpu().bytes_in_use(), before, 4 << 20) << round;
  }
  EXPECT_GE(gpu().peak_bytes_in_use(), before + static_cast<double>(bytes));
}

TEST(CudaDeviceLifetime, ABlockOutlivingItsDeviceIsFreed) {
  std::unique_ptr<Device> gpu;
  try {
    gpu = open_cuda_device(0);
  } catch (const std::runtime_error& error) {
    GTEST_SKIP() << "no CUDA device (" << error.what() << ")";
  }
  auto block = gpu->allocate(std::size_t{64} << 20);
  gpu->fill(block->data(), block->floats(), 1.0f);
  gpu.reset();    // its streams are gone
  block.reset();  // freed without them
  auto again = open_cuda_device(0);
  auto other = again->allocate(std::size_t{64} << 20);
  again->fill(other->data(), other->floats(), 2.0f);
  again->synchronize();
}

TEST(CudaDeviceCap, ACappedDeviceRefusesWhatWouldPassTheCap) {
  std::unique_ptr<Device> gpu;
  try {
    gpu = open_cuda_device(0);
  } catch (const std::runtime_error& error) {
    GTEST_SKIP() << "no CUDA device (" << error.what() << ")";
  }
  gpu.reset();
  constexpr double block_bytes = 256.0 * 1024 * 1024;
  // What is in use before (CUDA's context, other processes) plus two blocks and a half.
  auto probe = open_cuda_device(0);
  const double cap = probe->bytes_in_use() + 2.5 * block_bytes;
  probe.reset();
  auto capped = open_cuda_device(0, cap);
  auto first = capped->allocate(static_cast<std::size_t>(block_bytes));
  auto second = capped->allocate(static_cast<std::size_t>(block_bytes));
  try {
    capped->allocate(static_cast<std::size_t>(block_bytes));
    FAIL() << "a third block fitted under a cap of two and a half";
  } catch (const OutOfDeviceMemory& error) {
    EXPECT_EQ(error.requested_bytes(), block_bytes);
    EXPECT_LT(error.available_bytes(), block_bytes);
    EXPECT_NE(std::string(error.what()).find("capped at"), std::string::npos) << error.what();
  }
  first.reset();
  capped->synchronize();
  auto third = capped->allocate(static_cast<std::size_t>(block_bytes));  // room again
  capped->fill(third->data(), third->floats(), 1.0f);
  capped->synchronize();
  EXPECT_THROW(open_cuda_device(0, 0.0), std::invalid_argument);
}

TEST_F(CudaDevice, TimesWorkWithEvents) {
  constexpr std::size_t floats = 1 << 24;  // 64 MiB: tens of microseconds at least
  auto memory = gpu().allocate(floats * sizeof(float));
  const double seconds = gpu().time_seconds([&] {
    for (int repeat = 0; repeat < 10; ++repeat) gpu().fill(memory->data(), floats, 1.0f);
  });
  EXPECT_GT(seconds, 0.0);
  EXPECT_LT(seconds, 10.0);
}

}  // namespace
}  // namespace tessera::kernels
