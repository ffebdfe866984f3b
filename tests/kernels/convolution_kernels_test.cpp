// What every device's convolution library shares: keep_deterministic_only leaves out the
// algorithms the library reports as non-deterministic, keeping the library's order.
#include "tessera/kernels/convolution_kernels.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace tessera::kernels {
namespace {

// A library with one atomic algorithm between two deterministic ones; it runs nothing.
class ThreeAlgorithms final : public ConvolutionKernels {
 public:
  void forward(const ConvolutionGeometry&, std::int64_t, const std::string&, const float*,
               const float*, float*, float, DeviceMemory*) override {
    throw std::logic_error("not run");
  }
  void backward_data(const ConvolutionGeometry&, std::int64_t, const std::string&, const float*,
                     const float*, float*, float, DeviceMemory*) override {
    throw std::logic_error("not run");
  }
  void backward_filter(const ConvolutionGeometry&, std::int64_t, const std::string&, const float*,
                       const float*, float*, float, DeviceMemory*) override {
    throw std::logic_error("not run");
  }

 protected:
  std::vector<ConvolutionAlgorithm> every_algorithm(const ConvolutionGeometry&, std::int64_t,
                                                    Direction) override {
    return {{"fast_atomic", 0, false}, {"gemm", 0, true}, {"fft", 1024, true}};
  }
};

std::vector<std::string> names(const std::vector<ConvolutionAlgorithm>& algorithms) {
  std::vector<std::string> result;
  for (const auto& algorithm : algorithms) result.push_back(algorithm.name);
  return result;
}

TEST(ConvolutionKernels, DeterministicOnlyLeavesOutTheOthersInTheLibrarysOrder) {
  ThreeAlgorithms library;
  const ConvolutionGeometry any{};
  EXPECT_EQ(names(library.algorithms(any, 1, Direction::backward_filter)),
            (std::vector<std::string>{"fast_atomic", "gemm", "fft"}));
  library.keep_deterministic_only(true);
  EXPECT_EQ(names(library.algorithms(any, 1, Direction::backward_filter)),
            (std::vector<std::string>{"gemm", "fft"}));
  library.keep_deterministic_only(false);
  EXPECT_EQ(library.algorithms(any, 1, Direction::backward_filter).size(), 3u);
}

}  // namespace
}  // namespace tessera::kernels
