#pragma once
// The tests' MPI_COMM_WORLD, initialised on first use and finalized at exit by the library.
#include "tessera/kernels/communicator.hpp"

namespace tessera::kernels::testing {

inline Communicator& world() {
  static std::unique_ptr<Communicator> communicator = mpi_world();
  return *communicator;
}

}  // namespace tessera::kernels::testing
