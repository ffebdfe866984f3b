#include "cuda/cuda_context.hpp"

#include <cstdint>

#include "cuda/cuda_check.hpp"

namespace tessera::kernels::cuda {

CudaContext::CudaContext(int device_index) : device_index_(device_index) {
  make_current();
  try {
    // Blocking streams (not cudaStreamNonBlocking): work NCCL orders through the legacy default
    // stream (nccl_communicator.cpp) then waits for both of them.
    TESSERA_CUDA_CHECK(cudaStreamCreate(&compute_stream_));
    TESSERA_CUDA_CHECK(cudaStreamCreate(&copy_stream_));
    // Device memory comes from the default pool in stream order (cuda_memory.hpp). By default
    // the pool gives back what it holds unused at every synchronisation, which the real backend
    // does after every op; keeping it makes a step's layer-by-layer allocations reuse its blocks.
    cudaMemPool_t pool = nullptr;
    TESSERA_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, device_index));
    std::uint64_t keep_everything = UINT64_MAX;
    TESSERA_CUDA_CHECK(
        cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_everything));
    TESSERA_CUDA_CHECK(cudnnCreate(&cudnn_));
    TESSERA_CUDA_CHECK(cudnnSetStream(cudnn_, compute_stream_));
    TESSERA_CUDA_CHECK(cublasCreate(&cublas_));
    TESSERA_CUDA_CHECK(cublasSetStream(cublas_, compute_stream_));
    // Float32 GEMMs stay float32: TF32 tensor cores would need CUBLAS_TF32_TENSOR_OP_MATH, and
    // results must match the CPU within float32 tolerance.
    TESSERA_CUDA_CHECK(cublasSetMathMode(cublas_, CUBLAS_DEFAULT_MATH));
  } catch (...) {
    release();
    throw;
  }
}

CudaContext::~CudaContext() {
  release();
}

void CudaContext::release() {
  // Teardown errors cannot be reported from a destructor; the handles are gone either way.
  if (cublas_ != nullptr) cublasDestroy(cublas_);
  if (cudnn_ != nullptr) cudnnDestroy(cudnn_);
  if (copy_stream_ != nullptr) cudaStreamDestroy(copy_stream_);
  if (compute_stream_ != nullptr) cudaStreamDestroy(compute_stream_);
  cublas_ = nullptr;
  cudnn_ = nullptr;
  copy_stream_ = nullptr;
  compute_stream_ = nullptr;
}

void CudaContext::make_current() const {
  TESSERA_CUDA_CHECK(cudaSetDevice(device_index_));
}

void CudaContext::synchronize_compute() const {
  TESSERA_CUDA_CHECK(cudaStreamSynchronize(compute_stream_));
}

}  // namespace tessera::kernels::cuda
