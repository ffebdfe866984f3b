#pragma once
// Shared by the hdf5_*_test.cpp files: a scratch directory removed afterwards, small sample files
// with known contents, and raw HDF5 files that break the CosmoFlow layout on purpose.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "tessera/kernels/io/sample_writer.hpp"

namespace tessera::kernels::io::testing {

class ScratchDirectory {
 public:
  ScratchDirectory() {
    std::string pattern = (std::filesystem::temp_directory_path() / "tessera_hdf5_XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "mkdtemp failed";
    path_ = pattern;
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// Every voxel distinct (its flat index plus an offset), so a misplaced read cannot match.
inline std::vector<float> numbered_volume(const VolumeShape& shape, float offset = 0) {
  std::vector<float> volume(static_cast<std::size_t>(shape.floats()));
  std::iota(volume.begin(), volume.end(), offset);
  return volume;
}

// A raw dataset of any type and extents filled with zeros, for files that break the layout.
inline void write_raw_dataset(hid_t file, const char* name, hid_t type,
                              const std::vector<hsize_t>& extents) {
  const hid_t space = H5Screate_simple(static_cast<int>(extents.size()), extents.data(), nullptr);
  const hid_t dataset = H5Dcreate2(file, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(dataset, 0) << name;
  std::size_t elements = 1;
  for (const auto extent : extents) elements *= extent;
  std::vector<char> zeros(elements * H5Tget_size(type), 0);
  EXPECT_GE(H5Dwrite(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, zeros.data()), 0);
  H5Dclose(dataset);
  H5Sclose(space);
}

struct RawDataset {
  const char* name;
  hid_t type;
  std::vector<hsize_t> extents;
};

inline void write_raw_file(const std::string& path, const std::vector<RawDataset>& datasets) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0) << path;
  for (const auto& dataset : datasets)
    write_raw_dataset(file, dataset.name, dataset.type, dataset.extents);
  H5Fclose(file);
}

}  // namespace tessera::kernels::io::testing
