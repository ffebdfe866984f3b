#pragma once
// The sample files of a data set directory (*.h5 and *.hdf5, sorted by name), each checked for the
// CosmoFlow layout and for the same volume shape as the first.
#include <string>
#include <vector>

#include "tessera/kernels/io/sample_file_format.hpp"

namespace tessera::kernels::io {

struct DatasetIndex {
  std::string directory;
  std::vector<SampleFileInfo> samples;
  VolumeShape shape;                                // common to every sample
  SampleLayout layout = SampleLayout::cosmoflow;    // likewise
  StoredDType volume_dtype = StoredDType::float32;  // likewise

  std::vector<std::string> paths() const;
  double volume_bytes_per_sample() const;
};

// Throws tessera::InputError naming the directory (missing, no sample files) or the first bad file
// and what is wrong with it.
DatasetIndex index_dataset(const std::string& directory);

}  // namespace tessera::kernels::io
