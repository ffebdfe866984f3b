#pragma once
// Every CUDA, cuDNN, cuBLAS and NCCL call is checked: a failure becomes std::runtime_error naming
// the call and the library's own explanation, so a user sees "cudnnConvolutionForward(...):
// CUDNN_STATUS_NOT_SUPPORTED" rather than a wrong result later.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <nccl.h>

namespace tessera::kernels::cuda {

void check(cudaError_t status, const char* call);
void check(cudnnStatus_t status, const char* call);
void check(cublasStatus_t status, const char* call);
void check(ncclResult_t status, const char* call);

}  // namespace tessera::kernels::cuda

#define TESSERA_CUDA_CHECK(call) ::tessera::kernels::cuda::check((call), #call)
