#pragma once
// Kernel arguments that cannot describe a valid tensor operation are caller bugs; they are
// reported as std::invalid_argument naming the kernel and the offending value instead of letting
// a library fail with a generic message or the loop read out of bounds.
#include <concepts>
#include <stdexcept>
#include <string>

namespace tessera::kernels {

inline void require_argument(bool holds, const char* kernel, const std::string& expectation) {
  if (!holds) throw std::invalid_argument(std::string(kernel) + ": " + expectation);
}

// The same with the expectation built only on failure (checks inside loops).
template <std::invocable DescribeExpectation>
void require_argument(bool holds, const char* kernel, DescribeExpectation&& describe) {
  if (!holds) throw std::invalid_argument(std::string(kernel) + ": " + describe());
}

}  // namespace tessera::kernels
