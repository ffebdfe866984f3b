#include "tessera/core/common/dtype.hpp"

#include <stdexcept>

namespace tessera {

std::int64_t dtype_bytes(DType dtype) {
  switch (dtype) {
    case DType::float32:
      return 4;
    case DType::float16:
    case DType::bfloat16:
      return 2;
  }
  return 4;
}

std::string to_string(DType dtype) {
  switch (dtype) {
    case DType::float32:
      return "float32";
    case DType::float16:
      return "float16";
    case DType::bfloat16:
      return "bfloat16";
  }
  return "float32";
}

const std::vector<std::string>& dtype_names() {
  static const std::vector<std::string> names{"float32", "float16", "bfloat16"};
  return names;
}

DType dtype_from_string(const std::string& name) {
  if (name == "float32") return DType::float32;
  if (name == "float16") return DType::float16;
  if (name == "bfloat16") return DType::bfloat16;
  throw std::invalid_argument("unknown dtype " + name);
}

}  // namespace tessera
