#include "tessera/kernels/io/sample_reader.hpp"

#include <stdexcept>

#include "io/readahead_hint.hpp"
#include "io/sample_file.hpp"
#include "tessera/core/common/input_error.hpp"

namespace tessera::kernels::io {

SampleReader::SampleReader(const std::string& path) {
  Hdf5Guard guard;
  file_ = std::make_unique<OpenSampleFile>(open_sample_file(path));
}

SampleReader::~SampleReader() {
  if (file_) {
    Hdf5Guard guard;
    file_.reset();
  }
}

SampleReader::SampleReader(SampleReader&&) noexcept = default;

SampleReader& SampleReader::operator=(SampleReader&& other) noexcept {
  if (this != &other) {
    Hdf5Guard guard;
    file_ = std::move(other.file_);
  }
  return *this;
}

const SampleFileInfo& SampleReader::info() const {
  return file_->info;
}

std::int64_t sub_volume_floats(const VolumeShape& shape, const VolumeBox& box) {
  return shape.channels * box.voxels();
}

void SampleReader::read_volume(const VolumeBox& box, std::span<float> out) {
  const auto& info = file_->info;
  if (const auto problem = box_problem(box, info.shape); !problem.empty()) {
    throw InputError({.file = info.path}, volume_dataset_name(info.layout), problem);
  }
  const auto floats = sub_volume_floats(info.shape, box);
  if (static_cast<std::int64_t>(out.size()) != floats) {
    throw std::invalid_argument("SampleReader::read_volume: buffer of " +
                                std::to_string(out.size()) + " floats for " +
                                std::to_string(floats));
  }
  const std::string what = "cannot read " + describe(box) + " of " + info.path;
  const hsize_t start[4] = {0, static_cast<hsize_t>(box.begin[0]),
                            static_cast<hsize_t>(box.begin[1]), static_cast<hsize_t>(box.begin[2])};
  const hsize_t count[4] = {
      static_cast<hsize_t>(info.shape.channels), static_cast<hsize_t>(box.extent(0)),
      static_cast<hsize_t>(box.extent(1)), static_cast<hsize_t>(box.extent(2))};
  if (info.volume_offset_bytes >= 0) {
    announce_box_reads(info.path, info.volume_offset_bytes, info.shape, box);
  }
  Hdf5Guard guard;
  auto file_space = checked_handle(H5Dget_space(file_->volume.get()), H5Sclose, what);
  check_hdf5(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr),
             what);
  auto memory_space = checked_handle(H5Screate_simple(4, count, nullptr), H5Sclose, what);
  check_hdf5(H5Dread(file_->volume.get(), H5T_NATIVE_FLOAT, memory_space.get(), file_space.get(),
                     H5P_DEFAULT, out.data()),
             what);
}

std::vector<float> SampleReader::read_targets(const VolumeBox& box) {
  const auto& info = file_->info;
  const std::string what =
      "cannot read " + std::string(targets_dataset_name(info.layout)) + " of " + info.path;
  Hdf5Guard guard;
  if (info.layout == SampleLayout::cosmoflow) {
    std::vector<float> targets(kTargetCount);
    check_hdf5(H5Dread(file_->targets.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                       targets.data()),
               what);
    return targets;
  }
  if (const auto problem = box_problem(box, info.shape); !problem.empty()) {
    throw InputError({.file = info.path}, targets_dataset_name(info.layout), problem);
  }
  const hsize_t start[4] = {0, static_cast<hsize_t>(box.begin[0]),
                            static_cast<hsize_t>(box.begin[1]), static_cast<hsize_t>(box.begin[2])};
  const hsize_t count[4] = {1, static_cast<hsize_t>(box.extent(0)),
                            static_cast<hsize_t>(box.extent(1)),
                            static_cast<hsize_t>(box.extent(2))};
  auto file_space = checked_handle(H5Dget_space(file_->targets.get()), H5Sclose, what);
  check_hdf5(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr),
             what);
  auto memory_space = checked_handle(H5Screate_simple(4, count, nullptr), H5Sclose, what);
  std::vector<float> labels(static_cast<std::size_t>(box.voxels()));
  // HDF5 converts the stored int32 classes to float.
  check_hdf5(H5Dread(file_->targets.get(), H5T_NATIVE_FLOAT, memory_space.get(), file_space.get(),
                     H5P_DEFAULT, labels.data()),
             what);
  return labels;
}

}  // namespace tessera::kernels::io
