#pragma once
// Rounding integer division for window arithmetic, where plane indices go negative (padding).
#include <cstdint>

namespace tessera {

inline std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0);
}
inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return -floor_div(-a, b);
}
// a mod b in [0, b) for b > 0.
inline std::int64_t positive_mod(std::int64_t a, std::int64_t b) {
  return a - floor_div(a, b) * b;
}

}  // namespace tessera
