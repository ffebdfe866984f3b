#pragma once
// The lower median of measurements: the middle one of an odd count, the lower of the two middle
// ones of an even count, so that the result is one of the measurements (a time that happened,
// with the step or row it came from), not the mean of two.
#include <algorithm>
#include <cstddef>
#include <functional>
#include <stdexcept>
#include <vector>

namespace tessera {

template <typename T, typename Less = std::less<>>
T lower_median(std::vector<T> values, Less less = {}) {
  if (values.empty()) throw std::invalid_argument("lower_median: no values");
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>((values.size() - 1) / 2);
  std::nth_element(values.begin(), middle, values.end(), less);
  return *middle;
}

}  // namespace tessera
