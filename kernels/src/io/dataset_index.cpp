#include "tessera/kernels/io/dataset_index.hpp"

#include <algorithm>
#include <filesystem>

#include "tessera/core/common/input_error.hpp"

namespace tessera::kernels::io {

namespace {

bool is_sample_file(const std::filesystem::directory_entry& entry) {
  const auto extension = entry.path().extension();
  return entry.is_regular_file() && (extension == ".h5" || extension == ".hdf5");
}

}  // namespace

std::vector<std::string> DatasetIndex::paths() const {
  std::vector<std::string> paths;
  for (const auto& sample : samples) paths.push_back(sample.path);
  return paths;
}

double DatasetIndex::volume_bytes_per_sample() const {
  return static_cast<double>(shape.floats()) *
         static_cast<double>(stored_dtype_bytes(volume_dtype));
}

DatasetIndex index_dataset(const std::string& directory) {
  const SourceLocation where{.file = directory};
  std::error_code error;
  if (!std::filesystem::is_directory(directory, error)) {
    throw InputError(where, "", "no such data set directory");
  }
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    if (is_sample_file(entry)) paths.push_back(entry.path().string());
  }
  if (error) throw InputError(where, "", "cannot list the directory: " + error.message());
  if (paths.empty()) {
    throw InputError(where, "", "no sample files (*.h5 or *.hdf5) in the data set directory");
  }
  std::sort(paths.begin(), paths.end());

  DatasetIndex index{.directory = directory};
  for (const auto& path : paths) {
    index.samples.push_back(inspect_sample_file(path));
    const auto& sample = index.samples.back();
    const auto& shape = sample.shape;
    if (index.samples.size() == 1) {
      index.shape = shape;
      index.layout = sample.layout;
      index.volume_dtype = sample.volume_dtype;
    } else if (sample.volume_dtype != index.volume_dtype) {
      throw InputError({.file = path}, volume_dataset_name(index.layout),
                       "volume holds " + to_string(sample.volume_dtype) + " values but " +
                           index.samples.front().path + " holds " + to_string(index.volume_dtype) +
                           "; every sample must have one type");
    } else if (sample.layout != index.layout) {
      throw InputError({.file = path}, "",
                       "the file is in the " + to_string(sample.layout) + " layout but " +
                           index.samples.front().path + " in the " + to_string(index.layout) +
                           " one; every sample must have one layout");
    } else if (shape != index.shape) {
      throw InputError({.file = path}, volume_dataset_name(index.layout),
                       "volume is " + describe(shape) + " but " + index.samples.front().path +
                           " is " + describe(index.shape) + "; every sample must have one shape");
    }
  }
  return index;
}

}  // namespace tessera::kernels::io
