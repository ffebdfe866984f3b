// Missing or malformed data files give one clear error naming the file, the dataset and what is
// wrong, whether met by the dataset index or by the reader.
#include <gtest/gtest.h>

#include <fstream>

#include "hdf5_test_support.hpp"
#include "tessera/core/common/input_error.hpp"
#include "tessera/kernels/io/dataset_index.hpp"
#include "tessera/kernels/io/sample_reader.hpp"

namespace tessera::kernels::io {
namespace {

using testing::RawDataset;
using testing::ScratchDirectory;
using testing::write_raw_file;

const RawDataset kGoodVolume{"full", H5T_IEEE_F32LE, {4, 4, 4, 4}};
const RawDataset kGoodTargets{"unitPar", H5T_IEEE_F32LE, {4}};

// The message of the InputError `action` throws, or a failure.
template <typename Action>
std::string input_error_of(Action action) {
  try {
    action();
  } catch (const InputError& error) {
    return error.what();
  }
  ADD_FAILURE() << "no InputError";
  return "";
}

struct BrokenFile {
  std::string name;
  std::vector<RawDataset> datasets;
  std::string message;  // after "<path>: "
};

class MalformedFile : public ::testing::TestWithParam<BrokenFile> {};

TEST_P(MalformedFile, IndexAndReaderNameTheFileAndTheProblem) {
  ScratchDirectory scratch;
  const auto path = scratch.file("sample.h5");
  write_raw_file(path, GetParam().datasets);
  const std::string expected = path + ": " + GetParam().message;
  EXPECT_EQ(input_error_of([&] { SampleReader reader(path); }), expected);
  EXPECT_EQ(input_error_of([&] { index_dataset(scratch.path()); }), expected);
}

INSTANTIATE_TEST_SUITE_P(
    Layouts, MalformedFile,
    ::testing::Values(BrokenFile{"NoVolume",
                                 {kGoodTargets},
                                 "full: dataset is missing (expected 'full' of the CosmoFlow "
                                 "layout or 'volume' of the 3D U-Net layout)"},
                      BrokenFile{"NoTargets", {kGoodVolume}, "unitPar: dataset is missing"},
                      BrokenFile{"UnsignedCounts",
                                 {{"full", H5T_STD_U16LE, {4, 4, 4, 4}}, kGoodTargets},
                                 "full: expected float32 or int16 values, got 2-byte integer"},
                      BrokenFile{"DoubleVolume",
                                 {{"full", H5T_IEEE_F64LE, {4, 4, 4, 4}}, kGoodTargets},
                                 "full: expected float32 or int16 values, got 8-byte float"},
                      BrokenFile{"ChannelsMissing",
                                 {{"full", H5T_IEEE_F32LE, {4, 4, 4}}, kGoodTargets},
                                 "full: expected rank 4 (C,D,H,W), got rank 3 (4x4x4)"},
                      BrokenFile{"ThreeTargets",
                                 {kGoodVolume, {"unitPar", H5T_IEEE_F32LE, {3}}},
                                 "unitPar: expected 4 targets, got 3"},
                      BrokenFile{"TargetsAsMatrix",
                                 {kGoodVolume, {"unitPar", H5T_IEEE_F32LE, {2, 2}}},
                                 "unitPar: expected rank 1 (targets), got rank 2 (2x2)"},
                      BrokenFile{"EmptyVolume",
                                 {{"full", H5T_IEEE_F32LE, {4, 0, 4, 4}}, kGoodTargets},
                                 "full: the volume 4x0x4x4 is empty"},
                      BrokenFile{"UNetWithoutLabels",
                                 {{"volume", H5T_IEEE_F32LE, {1, 4, 4, 4}}},
                                 "segmentation: dataset is missing"},
                      BrokenFile{"UNetFloatLabels",
                                 {{"volume", H5T_IEEE_F32LE, {1, 4, 4, 4}},
                                  {"segmentation", H5T_IEEE_F32LE, {1, 4, 4, 4}}},
                                 "segmentation: expected int32 values, got 4-byte float"},
                      BrokenFile{"UNetLabelsOfAnotherExtent",
                                 {{"volume", H5T_IEEE_F32LE, {1, 4, 4, 4}},
                                  {"segmentation", H5T_STD_I32LE, {1, 4, 4, 2}}},
                                 "segmentation: expected a class per voxel of the volume, "
                                 "1x4x4x4, got 1x4x4x2"}),
    [](const auto& test) { return test.param.name; });

TEST(MalformedData, MissingFileAndNonHdf5File) {
  ScratchDirectory scratch;
  const auto missing = scratch.file("absent.h5");
  EXPECT_EQ(input_error_of([&] { SampleReader reader(missing); }), missing + ": no such file");
  const auto text = scratch.file("notes.h5");
  std::ofstream(text) << "this is not HDF5\n";
  EXPECT_EQ(input_error_of([&] { inspect_sample_file(text); }), text + ": not an HDF5 file");
  EXPECT_EQ(input_error_of([&] { index_dataset(scratch.path()); }), text + ": not an HDF5 file");
}

TEST(MalformedData, MissingOrEmptyDirectory) {
  ScratchDirectory scratch;
  const auto absent = scratch.file("nowhere");
  EXPECT_EQ(input_error_of([&] { index_dataset(absent); }),
            absent + ": no such data set directory");
  EXPECT_EQ(input_error_of([&] { index_dataset(scratch.path()); }),
            scratch.path() + ": no sample files (*.h5 or *.hdf5) in the data set directory");
}

TEST(MalformedData, ShapesThatDifferAcrossFilesNameBothFiles) {
  ScratchDirectory scratch;
  write_raw_file(scratch.file("a.h5"), {kGoodVolume, kGoodTargets});
  write_raw_file(scratch.file("b.h5"), {{"full", H5T_IEEE_F32LE, {4, 8, 4, 4}}, kGoodTargets});
  EXPECT_EQ(input_error_of([&] { index_dataset(scratch.path()); }),
            scratch.file("b.h5") + ": full: volume is 4x8x4x4 (C,D,H,W) but " +
                scratch.file("a.h5") + " is 4x4x4x4 (C,D,H,W); every sample must have one shape");
}

}  // namespace
}  // namespace tessera::kernels::io
