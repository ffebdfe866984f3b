#pragma once
// Reads one rank's part of a sample file: every channel of a box over D, H, W, with one HDF5
// hyperslab selection, so only those bytes leave the file (see sample_file_format.hpp for the
// layout and hdf5_read_mode_description() for serial versus MPI-IO reads).
#include <memory>
#include <span>
#include <string>

#include "tessera/kernels/io/sample_file_format.hpp"

namespace tessera::kernels::io {

struct OpenSampleFile;

class SampleReader {
 public:
  // Opens and checks `path`; throws tessera::InputError naming the file and what is wrong.
  explicit SampleReader(const std::string& path);
  ~SampleReader();
  SampleReader(SampleReader&&) noexcept;
  SampleReader& operator=(SampleReader&&) noexcept;

  const SampleFileInfo& info() const;
  const VolumeShape& shape() const { return info().shape; }

  // Reads `box` (non-empty, inside the volume; else tessera::InputError) of every channel into
  // `out`: C x box depth x box height x box width floats, row-major, exactly that many.
  void read_volume(const VolumeBox& box, std::span<float> out);
  // The targets of the sample as floats: CosmoFlow's four values, or the classes of the voxels
  // of `box` (the 3D U-Net layout), row-major.
  std::vector<float> read_targets(const VolumeBox& box);

 private:
  std::unique_ptr<OpenSampleFile> file_;
};

// Floats of every channel of `box`.
std::int64_t sub_volume_floats(const VolumeShape& shape, const VolumeBox& box);

}  // namespace tessera::kernels::io
