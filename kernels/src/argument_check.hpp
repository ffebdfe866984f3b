#pragma once
// Kernel arguments that cannot describe a valid tensor operation are caller bugs; they are
// reported as std::invalid_argument naming the kernel and the offending value instead of letting
// a library fail with a generic message or the loop read out of bounds. Shared by every device's
// kernels, so that they reject the same arguments with the same words.
#include <concepts>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessera::kernels {

inline void require_argument(bool holds, const char* kernel, const std::string& expectation) {
  if (!holds) throw std::invalid_argument(std::string(kernel) + ": " + expectation);
}

// The same with the expectation built only on failure (checks inside loops).
template <std::invocable DescribeExpectation>
void require_argument(bool holds, const char* kernel, DescribeExpectation&& describe) {
  if (!holds) throw std::invalid_argument(std::string(kernel) + ": " + describe());
}

// A classification loss's batch, class count and one label per sample, each in [0, classes).
inline void require_classification_labels(const char* kernel, std::int64_t batch,
                                          std::int64_t classes,
                                          const std::vector<std::int32_t>& labels) {
  require_argument(batch >= 1 && classes >= 1, kernel, "batch and classes must be >= 1");
  require_argument(labels.size() == static_cast<std::size_t>(batch), kernel,
                   "one label per sample expected (" + std::to_string(batch) + "), got " +
                       std::to_string(labels.size()));
  for (std::size_t sample = 0; sample < labels.size(); ++sample) {
    require_argument(labels[sample] >= 0 && labels[sample] < classes, kernel, [&] {
      return "label of sample " + std::to_string(sample) + " is " + std::to_string(labels[sample]) +
             ", expected 0 to " + std::to_string(classes - 1);
    });
  }
}

}  // namespace tessera::kernels
