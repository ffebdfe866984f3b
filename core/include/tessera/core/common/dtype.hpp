#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tessera {

enum class DType { float32, float16, bfloat16 };

std::int64_t dtype_bytes(DType dtype);
std::string to_string(DType dtype);
const std::vector<std::string>& dtype_names();
DType dtype_from_string(const std::string& name);  // name must be one of dtype_names()

}  // namespace tessera
