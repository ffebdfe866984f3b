#pragma once
// What every kernel on one GPU shares: the device, its compute stream (every kernel, cuDNN and
// cuBLAS call), its copy stream (host <-> device transfers) and the library handles bound to the
// compute stream. Created by open_cuda_device; the device is made current on creation.
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <string>

namespace tessera::kernels::cuda {

class CudaContext {
 public:
  explicit CudaContext(int device_index);
  ~CudaContext();
  CudaContext(const CudaContext&) = delete;
  CudaContext& operator=(const CudaContext&) = delete;

  int device_index() const { return device_index_; }
  cudaStream_t compute_stream() const { return compute_stream_; }
  cudaStream_t copy_stream() const { return copy_stream_; }
  cudnnHandle_t cudnn() const { return cudnn_; }
  cublasHandle_t cublas() const { return cublas_; }
  // Makes this context's GPU current for the calling thread (kernels launch on the current GPU).
  void make_current() const;
  // Blocks until the compute stream has finished everything issued so far.
  void synchronize_compute() const;

 private:
  void release();

  int device_index_;
  cudaStream_t compute_stream_ = nullptr;
  cudaStream_t copy_stream_ = nullptr;
  cudnnHandle_t cudnn_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
};

}  // namespace tessera::kernels::cuda
