#include "cuda/cuda_check.hpp"

#include <stdexcept>
#include <string>

namespace tessera::kernels::cuda {
namespace {

// The function's name, without the argument list the macro also stringified.
[[noreturn]] void fail(const char* call, const std::string& reason) {
  const std::string text(call);
  throw std::runtime_error(text.substr(0, text.find('(')) + ": " + reason);
}

}  // namespace

void check(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  cudaGetLastError();  // clears a non-sticky error so later calls do not report it again
  fail(call, std::string(cudaGetErrorName(status)) + " (" + cudaGetErrorString(status) + ")");
}

void check(cudnnStatus_t status, const char* call) {
  if (status == CUDNN_STATUS_SUCCESS) return;
  char detail[512] = {};
  cudnnGetLastErrorString(detail, sizeof(detail));
  fail(call,
       std::string(cudnnGetErrorString(status)) + (detail[0] ? std::string(": ") + detail : ""));
}

void check(cublasStatus_t status, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  fail(call, std::string(cublasGetStatusName(status)) + " (" + cublasGetStatusString(status) + ")");
}

void check(ncclResult_t status, const char* call) {
  if (status == ncclSuccess) return;
  fail(call, ncclGetErrorString(status));
}

}  // namespace tessera::kernels::cuda
