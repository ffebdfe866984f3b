// Built without the CUDA parts: there is no NCCL to communicate over.
#include <stdexcept>

#include "tessera/kernels/communicator.hpp"

namespace tessera::kernels {

std::unique_ptr<Communicator> nccl_over(Communicator& /*bootstrap*/) {
  throw std::runtime_error(
      "this build of tessera has no CUDA parts, so no NCCL communicator (configured with "
      "TESSERA_CUDA=OFF or without nvcc, cuDNN and NCCL)");
}

}  // namespace tessera::kernels
