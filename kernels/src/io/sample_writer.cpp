#include "tessera/kernels/io/sample_writer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "io/hdf5_handle.hpp"

namespace tessera::kernels::io {

namespace {

constexpr std::int64_t kBlockFloats = 8 << 20;  // 32 MiB of planes per write
// Large objects start on a page boundary, so a depth slab never shares a page with metadata.
constexpr hsize_t kAlignmentThresholdBytes = 1 << 20;
constexpr hsize_t kAlignmentBytes = 4096;

// A dataset's creation properties without the times HDF5 would record in it: the same seed
// writes the same bytes.
Hdf5Handle dataset_creation_properties(const std::string& what) {
  auto properties = checked_handle(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, what);
  check_hdf5(H5Pset_obj_track_times(properties.get(), false), what);
  return properties;
}

Hdf5Handle volume_creation_properties(const VolumeShape& shape, const VolumeLayout& layout,
                                      const std::string& what) {
  auto properties = dataset_creation_properties(what);
  if (layout.chunk_depth > 0) {
    const hsize_t chunk[4] = {
        1, static_cast<hsize_t>(std::min(layout.chunk_depth, shape.spatial[0])),
        static_cast<hsize_t>(shape.spatial[1]), static_cast<hsize_t>(shape.spatial[2])};
    check_hdf5(H5Pset_chunk(properties.get(), 4, chunk), what);
  } else {
    check_hdf5(H5Pset_layout(properties.get(), H5D_CONTIGUOUS), what);
  }
  return properties;
}

// The block as the file stores it: float32 as given, int16 rounded (HDF5's own conversion
// truncates toward zero, which would bias every value).
void write_block(hid_t dataset, hid_t memory_space, hid_t file_space, StoredDType dtype,
                 std::span<const float> block, std::vector<std::int16_t>& integers,
                 const std::string& what) {
  if (dtype == StoredDType::float32) {
    check_hdf5(
        H5Dwrite(dataset, H5T_NATIVE_FLOAT, memory_space, file_space, H5P_DEFAULT, block.data()),
        what);
    return;
  }
  integers.resize(block.size());
  std::transform(block.begin(), block.end(), integers.begin(), [](float value) {
    const float clamped = std::clamp(value, -32768.0f, 32767.0f);
    return static_cast<std::int16_t>(std::lround(clamped));
  });
  check_hdf5(
      H5Dwrite(dataset, H5T_NATIVE_SHORT, memory_space, file_space, H5P_DEFAULT, integers.data()),
      what);
}

void write_volume(hid_t file, const char* name, const VolumeShape& shape,
                  const VolumeBlockFiller& fill, const VolumeLayout& layout,
                  const std::string& what) {
  const hsize_t extents[4] = {
      static_cast<hsize_t>(shape.channels), static_cast<hsize_t>(shape.spatial[0]),
      static_cast<hsize_t>(shape.spatial[1]), static_cast<hsize_t>(shape.spatial[2])};
  auto file_space = checked_handle(H5Screate_simple(4, extents, nullptr), H5Sclose, what);
  auto creation = volume_creation_properties(shape, layout, what);
  const hid_t file_type = layout.dtype == StoredDType::int16 ? H5T_STD_I16LE : H5T_IEEE_F32LE;
  auto dataset = checked_handle(
      H5Dcreate2(file, name, file_type, file_space.get(), H5P_DEFAULT, creation.get(), H5P_DEFAULT),
      H5Dclose, what);
  const std::int64_t plane_floats = shape.spatial[1] * shape.spatial[2];
  const std::int64_t planes_per_block = std::max<std::int64_t>(1, kBlockFloats / plane_floats);
  std::vector<float> block;
  std::vector<std::int16_t> integers;
  for (std::int64_t channel = 0; channel < shape.channels; ++channel) {
    for (std::int64_t depth = 0; depth < shape.spatial[0]; depth += planes_per_block) {
      const std::int64_t depth_end = std::min(shape.spatial[0], depth + planes_per_block);
      block.resize(static_cast<std::size_t>((depth_end - depth) * plane_floats));
      fill(channel, depth, depth_end, block);
      const hsize_t start[4] = {static_cast<hsize_t>(channel), static_cast<hsize_t>(depth), 0, 0};
      const hsize_t count[4] = {1, static_cast<hsize_t>(depth_end - depth), extents[2], extents[3]};
      check_hdf5(
          H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr),
          what);
      auto memory_space = checked_handle(H5Screate_simple(4, count, nullptr), H5Sclose, what);
      write_block(dataset.get(), memory_space.get(), file_space.get(), layout.dtype, block,
                  integers, what);
    }
  }
}

// Written first and compact (the 16 bytes live in the dataset's header), so that every piece of
// metadata a reader touches sits in the file's first page, before the volume: opening a sample
// whose pages are not cached costs one disk read, not a seek to the end of the file.
void write_targets(hid_t file, const Targets& targets, const std::string& what) {
  const hsize_t extent = kTargetCount;
  auto space = checked_handle(H5Screate_simple(1, &extent, nullptr), H5Sclose, what);
  auto creation = dataset_creation_properties(what);
  check_hdf5(H5Pset_layout(creation.get(), H5D_COMPACT), what);
  auto dataset =
      checked_handle(H5Dcreate2(file, targets_dataset_name(SampleLayout::cosmoflow), H5T_IEEE_F32LE,
                                space.get(), H5P_DEFAULT, creation.get(), H5P_DEFAULT),
                     H5Dclose, what);
  check_hdf5(
      H5Dwrite(dataset.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, targets.data()),
      what);
}

// The 3D U-Net layout's classes, one int32 per voxel (1 x D x H x W, contiguous).
void write_labels(hid_t file, const VolumeShape& shape, std::span<const std::int32_t> labels,
                  const std::string& what) {
  const hsize_t extents[4] = {1, static_cast<hsize_t>(shape.spatial[0]),
                              static_cast<hsize_t>(shape.spatial[1]),
                              static_cast<hsize_t>(shape.spatial[2])};
  auto space = checked_handle(H5Screate_simple(4, extents, nullptr), H5Sclose, what);
  auto creation = dataset_creation_properties(what);
  auto dataset = checked_handle(
      H5Dcreate2(file, targets_dataset_name(SampleLayout::segmentation), H5T_STD_I32LE, space.get(),
                 H5P_DEFAULT, creation.get(), H5P_DEFAULT),
      H5Dclose, what);
  check_hdf5(
      H5Dwrite(dataset.get(), H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, labels.data()),
      what);
}

// Writes `path` through a temporary name: `write` fills the open file.
template <typename Write>
void write_atomically(const std::string& path, Write&& write) {
  const std::string partial_path = path + ".partial";
  const std::string what = "cannot write " + path;
  try {
    Hdf5Guard guard;
    auto access = checked_handle(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, what);
    check_hdf5(H5Pset_alignment(access.get(), kAlignmentThresholdBytes, kAlignmentBytes), what);
    auto creation = checked_handle(H5Pcreate(H5P_FILE_CREATE), H5Pclose, what);
    check_hdf5(H5Pset_obj_track_times(creation.get(), false), what);  // of the root group
    auto file =
        checked_handle(H5Fcreate(partial_path.c_str(), H5F_ACC_TRUNC, creation.get(), access.get()),
                       H5Fclose, what);
    write(file.get(), what);
    check_hdf5(H5Fflush(file.get(), H5F_SCOPE_LOCAL), what);
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(partial_path, ignored);
    throw;
  }
  std::error_code error;
  std::filesystem::rename(partial_path, path, error);
  if (error) throw std::runtime_error(what + ": " + error.message());
}

VolumeBlockFiller planes_of(const VolumeShape& shape, std::span<const float> volume) {
  if (static_cast<std::int64_t>(volume.size()) != shape.floats()) {
    throw std::invalid_argument("write_sample_file: " + std::to_string(volume.size()) +
                                " floats for a " + describe(shape) + " volume");
  }
  const std::int64_t plane_floats = shape.spatial[1] * shape.spatial[2];
  return [=](std::int64_t channel, std::int64_t depth_begin, std::int64_t depth_end,
             std::span<float> block) {
    const auto first = volume.begin() + (channel * shape.spatial[0] + depth_begin) * plane_floats;
    std::copy(first, first + (depth_end - depth_begin) * plane_floats, block.begin());
  };
}

}  // namespace

void write_sample_file(const std::string& path, const VolumeShape& shape, const Targets& targets,
                       const VolumeBlockFiller& fill, const VolumeLayout& layout) {
  write_atomically(path, [&](hid_t file, const std::string& what) {
    write_targets(file, targets, what);
    write_volume(file, volume_dataset_name(SampleLayout::cosmoflow), shape, fill, layout, what);
  });
}

void write_segmentation_file(const std::string& path, const VolumeShape& shape,
                             std::span<const float> volume, std::span<const std::int32_t> labels,
                             const VolumeLayout& layout) {
  if (static_cast<std::int64_t>(labels.size()) != shape.voxels()) {
    throw std::invalid_argument("write_segmentation_file: " + std::to_string(labels.size()) +
                                " labels for a " + describe(shape) + " volume");
  }
  const auto fill = planes_of(shape, volume);
  write_atomically(path, [&](hid_t file, const std::string& what) {
    write_labels(file, shape, labels, what);
    write_volume(file, volume_dataset_name(SampleLayout::segmentation), shape, fill, layout, what);
  });
}

void write_sample_file(const std::string& path, const VolumeShape& shape, const Targets& targets,
                       std::span<const float> volume, const VolumeLayout& layout) {
  write_sample_file(path, shape, targets, planes_of(shape, volume), layout);
}

}  // namespace tessera::kernels::io
