#include "io/hdf5_handle.hpp"

#include <stdexcept>
#include <utility>

#ifdef H5_HAVE_PARALLEL
#include <mpi.h>
#endif

namespace tessera::kernels::io {

namespace {

std::recursive_mutex& hdf5_mutex() {
  static std::recursive_mutex mutex;
  return mutex;
}

herr_t keep_innermost_message(unsigned position, const H5E_error2_t* error, void* message) {
  if (position == 0 && error->desc != nullptr) *static_cast<std::string*>(message) = error->desc;
  return 0;
}

}  // namespace

Hdf5Guard::Hdf5Guard() : lock_(hdf5_mutex()) {
  H5Eget_auto2(H5E_DEFAULT, &previous_function_, &previous_data_);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
}

Hdf5Guard::~Hdf5Guard() {
  H5Eset_auto2(H5E_DEFAULT, previous_function_, previous_data_);
}

Hdf5Handle::Hdf5Handle(Hdf5Handle&& other) noexcept
    : id_(std::exchange(other.id_, H5I_INVALID_HID)), closer_(other.closer_) {}

Hdf5Handle& Hdf5Handle::operator=(Hdf5Handle&& other) noexcept {
  if (this != &other) {
    reset();
    id_ = std::exchange(other.id_, H5I_INVALID_HID);
    closer_ = other.closer_;
  }
  return *this;
}

void Hdf5Handle::reset() {
  if (id_ >= 0 && closer_ != nullptr) closer_(id_);
  id_ = H5I_INVALID_HID;
}

std::string hdf5_error_message() {
  std::string message;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_innermost_message, &message);
  return message;
}

void check_hdf5(herr_t status, const std::string& what) {
  if (status < 0) {
    const std::string detail = hdf5_error_message();
    throw std::runtime_error(what + (detail.empty() ? "" : ": " + detail));
  }
}

Hdf5Handle checked_handle(hid_t id, Hdf5Handle::Closer closer, const std::string& what) {
  check_hdf5(id < 0 ? -1 : 0, what);
  return {id, closer};
}

Hdf5Handle read_access_properties() {
  auto properties = checked_handle(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, "HDF5 file access");
#ifdef H5_HAVE_PARALLEL
  // Each rank opens the sample on its own (MPI_COMM_SELF) and reads its own hyperslab: the boxes
  // of a spatial group do not overlap, so there is nothing for collective buffering to merge.
  int mpi_initialised = 0;
  MPI_Initialized(&mpi_initialised);
  if (mpi_initialised) {
    check_hdf5(H5Pset_fapl_mpio(properties.get(), MPI_COMM_SELF, MPI_INFO_NULL),
               "HDF5 MPI-IO file access");
  }
#endif
  return properties;
}

}  // namespace tessera::kernels::io
