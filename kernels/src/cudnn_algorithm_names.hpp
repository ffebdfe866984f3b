#pragma once
// The cuDNN pass that computes each training direction of a convolution, and cuDNN's algorithms
// for each pass by stable name. Host-only (no CUDA headers), so it is tested without the toolkit;
// the CUDA sources check at compile time that the tables follow cuDNN's enumerators.
#include <string>
#include <vector>

#include "tessera/core/cost/profile_database.hpp"  // Direction

namespace tessera::kernels {

enum class CudnnPass { forward, backward_data, backward_filter };

// cuDNN only knows plain convolutions: a transposed convolution's forward is the plain
// convolution's backward-data pass and vice versa; the filter gradient stays a filter gradient.
CudnnPass cudnn_pass(bool transposed, Direction direction);

// Index i is the name of cuDNN's algorithm enumerator i for the pass, its suffix as in the
// header ("IMPLICIT_PRECOMP_GEMM" for CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM).
const std::vector<std::string>& cudnn_algorithm_names(CudnnPass pass);
std::string cudnn_algorithm_name(CudnnPass pass, int algorithm);
// Inverse of cudnn_algorithm_name; throws std::invalid_argument listing the pass's names.
int cudnn_algorithm_index(CudnnPass pass, const std::string& name);

std::string to_string(CudnnPass pass);

}  // namespace tessera::kernels
