#include "io/sample_file.hpp"

#include <filesystem>
#include <optional>
#include <vector>

#include "tessera/core/common/input_error.hpp"

namespace tessera::kernels::io {

namespace {

constexpr hsize_t kMaxSampleBytes = hsize_t{1} << 40;

[[noreturn]] void bad_file(const std::string& path, const std::string& dataset,
                           const std::string& problem) {
  throw InputError({.file = path}, dataset, problem);
}

std::string describe_type(hid_t type) {
  const auto bytes = std::to_string(H5Tget_size(type));
  switch (H5Tget_class(type)) {
    case H5T_FLOAT:
      return bytes + "-byte float";
    case H5T_INTEGER:
      return bytes + "-byte integer";
    case H5T_STRING:
      return "string";
    case H5T_COMPOUND:
      return "compound";
    default:
      return "non-numeric type";
  }
}

std::vector<hsize_t> dataset_extents(hid_t dataset, const std::string& what) {
  auto space = checked_handle(H5Dget_space(dataset), H5Sclose, what);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  check_hdf5(rank, what);
  std::vector<hsize_t> extents(static_cast<std::size_t>(rank));
  check_hdf5(H5Sget_simple_extent_dims(space.get(), extents.data(), nullptr), what);
  return extents;
}

std::string join_extents(const std::vector<hsize_t>& extents) {
  std::string text;
  for (const auto extent : extents) text += (text.empty() ? "" : "x") + std::to_string(extent);
  return extents.empty() ? "a scalar" : text;
}

// The values a dataset may hold: float32, int32, or a volume's float32 or int16.
enum class Values { float32, int32, volume };

// The stored type of a volume, if it is one a volume may have.
std::optional<StoredDType> volume_dtype_of(hid_t type) {
  const auto bytes = H5Tget_size(type);
  const auto type_class = H5Tget_class(type);
  if (type_class == H5T_FLOAT && bytes == 4) return StoredDType::float32;
  if (type_class == H5T_INTEGER && bytes == 2 && H5Tget_sign(type) == H5T_SGN_2) {
    return StoredDType::int16;
  }
  return std::nullopt;
}

// Opens `name` in `file` and checks it holds `expected` values of the given rank; a volume's
// stored type goes to `volume_dtype` when given.
Hdf5Handle open_dataset(hid_t file, const std::string& path, const char* name,
                        std::size_t expected_rank, std::vector<hsize_t>& extents,
                        Values expected = Values::float32, StoredDType* volume_dtype = nullptr) {
  if (H5Lexists(file, name, H5P_DEFAULT) <= 0) bad_file(path, name, "dataset is missing");
  // No chunk cache: every sample is read once, and through the cache HDF5 would copy each chunk
  // twice (file to cache, cache to buffer); without it, it reads the selection straight into the
  // caller's buffer.
  auto access = checked_handle(H5Pcreate(H5P_DATASET_ACCESS), H5Pclose, path + ": " + name);
  check_hdf5(H5Pset_chunk_cache(access.get(), H5D_CHUNK_CACHE_NSLOTS_DEFAULT, 0,
                                H5D_CHUNK_CACHE_W0_DEFAULT),
             path + ": " + name);
  H5O_info_t object{};
  if (H5Oget_info_by_name2(file, name, &object, H5O_INFO_BASIC, H5P_DEFAULT) >= 0 &&
      object.type != H5O_TYPE_DATASET) {
    bad_file(path, name,
             std::string("expected a dataset, got a ") +
                 (object.type == H5O_TYPE_GROUP ? "group" : "named datatype"));
  }
  const hid_t opened = H5Dopen2(file, name, access.get());
  if (opened < 0) bad_file(path, name, "cannot open the dataset: " + hdf5_error_message());
  Hdf5Handle dataset(opened, H5Dclose);
  auto type = checked_handle(H5Dget_type(dataset.get()), H5Tclose, path + ": " + name);
  const bool four_bytes = H5Tget_size(type.get()) == 4;
  const auto stored = volume_dtype_of(type.get());
  const bool sound = expected == Values::volume ? stored.has_value()
                     : expected == Values::int32
                         ? H5Tget_class(type.get()) == H5T_INTEGER && four_bytes
                         : H5Tget_class(type.get()) == H5T_FLOAT && four_bytes;
  if (!sound) {
    const char* wanted = expected == Values::volume  ? "float32 or int16"
                         : expected == Values::int32 ? "int32"
                                                     : "float32";
    bad_file(path, name,
             std::string("expected ") + wanted + " values, got " + describe_type(type.get()));
  }
  if (volume_dtype != nullptr && stored) *volume_dtype = *stored;
  extents = dataset_extents(dataset.get(), path + ": " + name);
  if (extents.size() != expected_rank) {
    bad_file(path, name,
             "expected rank " + std::to_string(expected_rank) + " (" +
                 (expected_rank == 4 ? "C,D,H,W" : "targets") + "), got rank " +
                 std::to_string(extents.size()) + " (" + join_extents(extents) + ")");
  }
  return dataset;
}

}  // namespace

OpenSampleFile open_sample_file(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) bad_file(path, "", "no such file");
  if (H5Fis_hdf5(path.c_str()) <= 0) bad_file(path, "", "not an HDF5 file");
  OpenSampleFile sample;
  sample.info.path = path;
  auto access = read_access_properties();
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, access.get());
  if (file < 0) bad_file(path, "", "cannot open the HDF5 file: " + hdf5_error_message());
  sample.file = Hdf5Handle(file, H5Fclose);

  auto& layout = sample.info.layout;
  if (H5Lexists(file, volume_dataset_name(SampleLayout::cosmoflow), H5P_DEFAULT) > 0) {
    layout = SampleLayout::cosmoflow;
  } else if (H5Lexists(file, volume_dataset_name(SampleLayout::segmentation), H5P_DEFAULT) > 0) {
    layout = SampleLayout::segmentation;
  } else {
    bad_file(path, "full",
             "dataset is missing (expected 'full' of the CosmoFlow layout or 'volume' of the 3D "
             "U-Net layout)");
  }
  const char* volume_name = volume_dataset_name(layout);
  std::vector<hsize_t> extents;
  sample.volume =
      open_dataset(file, path, volume_name, 4, extents, Values::volume, &sample.info.volume_dtype);
  for (const auto extent : extents) {
    if (extent == 0)
      bad_file(path, volume_name, "the volume " + join_extents(extents) + " is empty");
  }
  const auto volume_extents = extents;
  // A header can declare any extent without the data behind it: such a volume would make every
  // reader allocate what the file never held.
  auto declared_bytes = static_cast<hsize_t>(stored_dtype_bytes(sample.info.volume_dtype));
  for (const auto extent : extents) {
    if (__builtin_mul_overflow(declared_bytes, extent, &declared_bytes) ||
        declared_bytes > kMaxSampleBytes) {
      bad_file(path, volume_name,
               "the volume " + join_extents(extents) +
                   " declares more than the 1 TiB per sample Tessera reads");
    }
  }
  const hsize_t stored_bytes = H5Dget_storage_size(sample.volume.get());
  if (stored_bytes == 0) {
    bad_file(path, volume_name,
             "the volume " + join_extents(extents) + " declares " + std::to_string(declared_bytes) +
                 " bytes but none are written");
  }
  auto& shape = sample.info.shape;
  shape.channels = static_cast<std::int64_t>(extents[0]);
  for (int axis = 0; axis < kSpatialAxes; ++axis) {
    shape.spatial[axis] = static_cast<std::int64_t>(extents[axis + 1]);
  }
  auto creation =
      checked_handle(H5Dget_create_plist(sample.volume.get()), H5Pclose, path + ": " + volume_name);
  if (H5Pget_layout(creation.get()) == H5D_CHUNKED) {
    hsize_t chunk[4] = {};
    check_hdf5(H5Pget_chunk(creation.get(), 4, chunk), path + ": " + volume_name);
    sample.info.chunk_depth = static_cast<std::int64_t>(chunk[1]);
  } else {
    // Contiguous data is stored whole or not at all (compression needs chunks).
    if (stored_bytes < declared_bytes) {
      bad_file(path, volume_name,
               "the volume declares " + std::to_string(declared_bytes) + " bytes but stores " +
                   std::to_string(stored_bytes));
    }
    const haddr_t offset = H5Dget_offset(sample.volume.get());
    if (offset != HADDR_UNDEF) sample.info.volume_offset_bytes = static_cast<std::int64_t>(offset);
  }

  const char* targets_name = targets_dataset_name(layout);
  if (layout == SampleLayout::cosmoflow) {
    sample.targets = open_dataset(file, path, targets_name, 1, extents);
    if (extents[0] != kTargetCount) {
      bad_file(path, targets_name,
               "expected " + std::to_string(kTargetCount) + " targets, got " +
                   std::to_string(extents[0]));
    }
    return sample;
  }
  sample.targets = open_dataset(file, path, targets_name, 4, extents, Values::int32);
  if (extents[0] != 1 || extents[1] != volume_extents[1] || extents[2] != volume_extents[2] ||
      extents[3] != volume_extents[3]) {
    bad_file(path, targets_name,
             "expected a class per voxel of the volume, 1x" + std::to_string(volume_extents[1]) +
                 "x" + std::to_string(volume_extents[2]) + "x" + std::to_string(volume_extents[3]) +
                 ", got " + join_extents(extents));
  }
  return sample;
}

std::string to_string(SampleLayout layout) {
  return layout == SampleLayout::cosmoflow ? "CosmoFlow (full, unitPar)"
                                           : "3D U-Net (volume, segmentation)";
}

const char* volume_dataset_name(SampleLayout layout) {
  return layout == SampleLayout::cosmoflow ? "full" : "volume";
}

const char* targets_dataset_name(SampleLayout layout) {
  return layout == SampleLayout::cosmoflow ? "unitPar" : "segmentation";
}

SampleFileInfo inspect_sample_file(const std::string& path) {
  Hdf5Guard guard;
  return open_sample_file(path).info;
}

bool hdf5_is_parallel() {
#ifdef H5_HAVE_PARALLEL
  return true;
#else
  return false;
#endif
}

std::string hdf5_read_mode_description() {
  const std::string version = "HDF5 " H5_VERSION;
  if (hdf5_is_parallel()) {
    return "parallel " + version + ": each rank reads its sub-volume hyperslab over MPI-IO";
  }
  return "serial " + version +
         " (built without parallel HDF5): each rank opens the file itself and reads its "
         "sub-volume hyperslab with POSIX I/O";
}

}  // namespace tessera::kernels::io
