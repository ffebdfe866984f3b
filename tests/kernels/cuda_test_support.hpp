#pragma once
// GPU tests compile everywhere and skip at run time where no CUDA device can be opened (no GPU,
// or a build without the CUDA parts), saying why.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>

#include "tessera/kernels/device.hpp"

namespace tessera::kernels::testing {

template <class Base = ::testing::Test>
class WithCudaDevice : public Base {
 protected:
  void SetUp() override {
    try {
      gpu_ = open_cuda_device(0);
    } catch (const std::runtime_error& error) {
      GTEST_SKIP() << "no CUDA device (" << error.what() << ")";
    }
  }
  Device& gpu() { return *gpu_; }

 private:
  std::unique_ptr<Device> gpu_;
};

}  // namespace tessera::kernels::testing
