// The one symbol libtessera_cuda.so exports: its table of entry points (cuda_entry.hpp). The
// module is built with hidden visibility, so its own copies of the functions below never clash
// with the program's forwarding functions of the same names.
#include "cuda_module/cuda_entry.hpp"

#include "cudnn_layout_check.hpp"

extern "C" __attribute__((visibility("default"))) const tessera::kernels::CudaEntry*
tessera_cuda_entry() {
  using namespace tessera::kernels;
  static const CudaEntry entry{.layout_version = kCudaEntryLayoutVersion,
                               .add_cuda_devices = &add_cuda_devices,
                               .cuda_library_versions = &cuda_library_versions,
                               .open_cuda_device = &open_cuda_device,
                               .nccl_over = &nccl_over,
                               .cudnn_convolution_output_dims = &cudnn_convolution_output_dims,
                               .cudnn_pooling_output_dims = &cudnn_pooling_output_dims};
  return &entry;
}
