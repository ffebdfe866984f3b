#pragma once
// One training sample per HDF5 file, in the layout of one of the reference data sets, told apart
// by their datasets:
//   CosmoFlow (regression):
//     full          C x D x H x W float32   the volume (4 channels of 128^3 or 512^3), or int16
//                                           (MLPerf HPC's counts); read as float32 either way
//     unitPar       4 float32               the targets (normalised cosmological parameters)
//   3D U-Net (segmentation):
//     volume        C x D x H x W float32   the volume (or int16)
//     segmentation  1 x D x H x W int32     each voxel's class
// The checks here are the single definition of a well-formed file, for the dataset index, the
// sample reader and `tessera data inspect`.
#include <array>
#include <cstdint>
#include <string>

#include "tessera/core/scenario/scenario.hpp"
#include "tessera/kernels/io/volume_box.hpp"

namespace tessera::kernels::io {

enum class SampleLayout { cosmoflow, segmentation };
std::string to_string(SampleLayout layout);

// The dataset holding the volume and the one holding the targets, per layout.
const char* volume_dataset_name(SampleLayout layout);
const char* targets_dataset_name(SampleLayout layout);
inline constexpr int kTargetCount = 4;  // CosmoFlow's
using Targets = std::array<float, kTargetCount>;

struct SampleFileInfo {
  std::string path;
  SampleLayout layout = SampleLayout::cosmoflow;
  VolumeShape shape;
  StoredDType volume_dtype = StoredDType::float32;  // the volume's values in the file
  // Depth planes per chunk of `full`, 0 when contiguous (then the volume starts at byte
  // `volume_offset_bytes` of the file).
  std::int64_t chunk_depth = 0;
  std::int64_t volume_offset_bytes = -1;
};

// Opens `path` and checks the layout above. Throws tessera::InputError naming the file, the
// dataset and what is wrong (missing file, not HDF5, missing dataset, wrong rank or type).
SampleFileInfo inspect_sample_file(const std::string& path);

// Whether this build's HDF5 reads over MPI-IO (H5_HAVE_PARALLEL), and a line saying how samples
// are read, for `tessera data` and run reports.
bool hdf5_is_parallel();
std::string hdf5_read_mode_description();

}  // namespace tessera::kernels::io
