#pragma once
// Float32 values as a raw file (little-endian on every machine Tessera runs on, C order): what
// layer-check and model-check write for analysis/torch_crosscheck.py.
#include <filesystem>
#include <vector>

namespace tessera::app {

// Throws std::runtime_error naming the file when it cannot be written.
void write_raw_floats(const std::filesystem::path& path, const std::vector<float>& values);

}  // namespace tessera::app
