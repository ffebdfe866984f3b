#pragma once
// HDF5 C API plumbing for the io sources: identifiers closed on scope exit, every call made under
// one process-wide lock, and HDF5's own error printing silenced so that failures reach the user
// as our messages. The lock matters for HDF5 builds without H5_HAVE_THREADSAFE (parallel HDF5
// builds usually lack it), since the prefetcher reads on its own thread; Debian's serial 1.10 is
// thread-safe, where the lock only repeats HDF5's own global one.
#include <hdf5.h>

#include <mutex>
#include <string>

namespace tessera::kernels::io {

// Held while calling HDF5: takes the lock and turns off HDF5's automatic error-stack printing
// (kept per thread by thread-safe builds) for its lifetime.
class Hdf5Guard {
 public:
  Hdf5Guard();
  ~Hdf5Guard();
  Hdf5Guard(const Hdf5Guard&) = delete;
  Hdf5Guard& operator=(const Hdf5Guard&) = delete;

 private:
  std::unique_lock<std::recursive_mutex> lock_;
  H5E_auto2_t previous_function_ = nullptr;
  void* previous_data_ = nullptr;
};

// An HDF5 identifier (file, dataset, dataspace, type or property list) closed on destruction.
// Destroy it with an Hdf5Guard held.
class Hdf5Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Hdf5Handle() = default;
  Hdf5Handle(hid_t id, Closer closer) : id_(id), closer_(closer) {}
  ~Hdf5Handle() { reset(); }
  Hdf5Handle(Hdf5Handle&& other) noexcept;
  Hdf5Handle& operator=(Hdf5Handle&& other) noexcept;
  Hdf5Handle(const Hdf5Handle&) = delete;
  Hdf5Handle& operator=(const Hdf5Handle&) = delete;

  hid_t get() const { return id_; }
  void reset();

 private:
  hid_t id_ = H5I_INVALID_HID;
  Closer closer_ = nullptr;
};

// The innermost message on this thread's HDF5 error stack ("" when empty).
std::string hdf5_error_message();
// Throws std::runtime_error("<what>: <HDF5's message>") when `status` is negative.
void check_hdf5(herr_t status, const std::string& what);
// Wraps a freshly created identifier; throws like check_hdf5 when it is invalid.
Hdf5Handle checked_handle(hid_t id, Hdf5Handle::Closer closer, const std::string& what);

// File-access properties for reading a sample: MPI-IO (one rank per file handle, independent
// reads) when this HDF5 has H5_HAVE_PARALLEL and MPI is initialised, the default POSIX driver
// otherwise.
Hdf5Handle read_access_properties();

}  // namespace tessera::kernels::io
