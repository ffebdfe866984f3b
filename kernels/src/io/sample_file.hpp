#pragma once
// An opened, checked sample file: the handles the reader keeps between reads.
#include <string>

#include "io/hdf5_handle.hpp"
#include "tessera/kernels/io/sample_file_format.hpp"

namespace tessera::kernels::io {

struct OpenSampleFile {
  SampleFileInfo info;
  Hdf5Handle file;
  Hdf5Handle volume;   // `full` or `volume`
  Hdf5Handle targets;  // `unitPar` or `segmentation`
};

// Opens `path` read-only and checks its layout; throws tessera::InputError like
// inspect_sample_file. Call with an Hdf5Guard held.
OpenSampleFile open_sample_file(const std::string& path);

}  // namespace tessera::kernels::io
