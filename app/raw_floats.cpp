#include "raw_floats.hpp"

#include <fstream>
#include <stdexcept>

namespace tessera::app {

void write_raw_floats(const std::filesystem::path& path, const std::vector<float>& values) {
  std::ofstream file(path, std::ios::binary);
  file.write(reinterpret_cast<const char*>(values.data()),
             static_cast<std::streamsize>(values.size() * sizeof(float)));
  if (!file) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace tessera::app
