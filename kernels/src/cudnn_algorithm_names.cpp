#include "cudnn_algorithm_names.hpp"

#include <stdexcept>

namespace tessera::kernels {

CudnnPass cudnn_pass(bool transposed, Direction direction) {
  switch (direction) {
    case Direction::forward:
      return transposed ? CudnnPass::backward_data : CudnnPass::forward;
    case Direction::backward_data:
      return transposed ? CudnnPass::forward : CudnnPass::backward_data;
    case Direction::backward_filter:
      return CudnnPass::backward_filter;
  }
  throw std::invalid_argument("unknown convolution direction");
}

const std::vector<std::string>& cudnn_algorithm_names(CudnnPass pass) {
  // In enumerator order of cudnnConvolution{Fwd,BwdData,BwdFilter}Algo_t (cudnn_ops.h, cuDNN 9).
  static const std::vector<std::string> forward = {
      "IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM", "GEMM", "DIRECT", "FFT", "FFT_TILING",
      "WINOGRAD",      "WINOGRAD_NONFUSED"};
  static const std::vector<std::string> backward_data = {
      "ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
  static const std::vector<std::string> backward_filter = {
      "ALGO_0", "ALGO_1", "FFT", "ALGO_3", "WINOGRAD", "WINOGRAD_NONFUSED", "FFT_TILING"};
  switch (pass) {
    case CudnnPass::forward:
      return forward;
    case CudnnPass::backward_data:
      return backward_data;
    case CudnnPass::backward_filter:
      return backward_filter;
  }
  throw std::invalid_argument("unknown cuDNN pass");
}

std::string cudnn_algorithm_name(CudnnPass pass, int algorithm) {
  const auto& names = cudnn_algorithm_names(pass);
  if (algorithm < 0 || algorithm >= static_cast<int>(names.size())) {
    throw std::invalid_argument("cuDNN " + to_string(pass) + " algorithm " +
                                std::to_string(algorithm) + " is unknown to this build");
  }
  return names[static_cast<std::size_t>(algorithm)];
}

int cudnn_algorithm_index(CudnnPass pass, const std::string& name) {
  const auto& names = cudnn_algorithm_names(pass);
  std::string known;
  for (std::size_t index = 0; index < names.size(); ++index) {
    if (names[index] == name) return static_cast<int>(index);
    known += (index == 0 ? "" : ", ") + names[index];
  }
  throw std::invalid_argument("unknown cuDNN " + to_string(pass) + " algorithm '" + name +
                              "': expected one of " + known);
}

std::string to_string(CudnnPass pass) {
  switch (pass) {
    case CudnnPass::forward:
      return "forward";
    case CudnnPass::backward_data:
      return "backward-data";
    case CudnnPass::backward_filter:
      return "backward-filter";
  }
  return "unknown";
}

}  // namespace tessera::kernels
