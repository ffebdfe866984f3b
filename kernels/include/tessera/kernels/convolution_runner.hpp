#pragma once
// Convolutions run with the first algorithm the device's library offers for each problem (its
// own first choice), with one workspace grown to the largest need. For code that runs many
// differently shaped convolutions without a profile (partitioned convolutions, their reference
// in tests and benchmarks); the real backend picks algorithms from profiles instead.
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "tessera/kernels/convolution_kernels.hpp"

namespace tessera::kernels {

class Device;

class ConvolutionRunner {
 public:
  explicit ConvolutionRunner(Device& device);
  ~ConvolutionRunner();

  void forward(const ConvolutionGeometry& geometry, std::int64_t batch, const float* x,
               const float* w, float* y, float beta);
  void backward_data(const ConvolutionGeometry& geometry, std::int64_t batch, const float* dy,
                     const float* w, float* dx, float beta);
  void backward_filter(const ConvolutionGeometry& geometry, std::int64_t batch, const float* x,
                       const float* dy, float* dw, float beta);

  // The algorithm used for this problem (cached), and the workspace it needs allocated.
  const ConvolutionAlgorithm& algorithm(const ConvolutionGeometry& geometry, std::int64_t batch,
                                        Direction direction);

 private:
  DeviceMemory* workspace_for(double bytes);

  Device& device_;
  std::map<std::string, ConvolutionAlgorithm> chosen_;
  std::unique_ptr<DeviceMemory> workspace_;
};

}  // namespace tessera::kernels
