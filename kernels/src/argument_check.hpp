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

#include "tessera/kernels/layer_kernels.hpp"

namespace tessera::kernels {

inline void require_argument(bool holds, const char* kernel, const std::string& expectation) {
  if (!holds) throw std::invalid_argument(std::string(kernel) + ": " + expectation);
}

// The same with the expectation built only on failure (checks inside loops).
template <std::invocable DescribeExpectation>
void require_argument(bool holds, const char* kernel, DescribeExpectation&& describe) {
  if (!holds) throw std::invalid_argument(std::string(kernel) + ": " + describe());
}

// A dropout call: count >= 0 whole samples of draw.per_sample >= 1 elements, p in [0, 1).
inline void require_dropout_arguments(std::int64_t count, float drop_probability,
                                      const DropoutDraw& draw) {
  require_argument(count >= 0 && draw.per_sample >= 1 && count % draw.per_sample == 0,
                   "dropout_forward", [&] {
                     return "need a count of whole samples, got " + std::to_string(count) +
                            " elements of samples of " + std::to_string(draw.per_sample);
                   });
  require_argument(drop_probability >= 0.0f && drop_probability < 1.0f, "dropout_forward", [&] {
    return "drop probability must be in [0, 1), got " + std::to_string(drop_probability);
  });
}

// A normalisation's extents (batch and layer norm): batch >= 0, channels >= 1, and the values per
// channel and sample (`name`: spatial, positions) at least `minimum`.
inline void require_normalization_extents(const char* kernel, std::int64_t batch,
                                          std::int64_t channels, std::int64_t extent,
                                          const std::string& name, std::int64_t minimum) {
  require_argument(batch >= 0 && channels >= 1 && extent >= minimum, kernel, [&] {
    return "need batch >= 0, channels >= 1, " + name + " >= " + std::to_string(minimum) + ", got " +
           std::to_string(batch) + ", " + std::to_string(channels) + ", " + std::to_string(extent);
  });
}

// A concat's channel counts: one per tensor of `tensors` (its inputs in forward, their gradients
// in backward, as `role` says), at least one tensor, each count >= 0. Returns their sum.
inline std::int64_t concat_channel_total(const char* kernel, std::size_t tensors,
                                         const std::string& role,
                                         const std::vector<std::int64_t>& channels) {
  require_argument(tensors == channels.size() && tensors > 0, kernel,
                   "one channel count per " + role + " expected, got " + std::to_string(tensors) +
                       " " + role + "s and " + std::to_string(channels.size()) + " channel counts");
  std::int64_t total = 0;
  for (std::int64_t count : channels) {
    require_argument(count >= 0, kernel, "channel counts must be >= 0");
    total += count;
  }
  return total;
}

// A classification loss's batch, class count and one label per sample, each in [0, classes).
inline void require_classification_labels(const char* kernel, std::int64_t batch,
                                          std::int64_t classes, std::int64_t positions,
                                          const std::vector<std::int32_t>& labels) {
  require_argument(batch >= 1 && classes >= 1 && positions >= 1, kernel,
                   "batch, classes and positions must be >= 1");
  require_argument(labels.size() == static_cast<std::size_t>(batch * positions), kernel,
                   "one label per sample and position expected (" +
                       std::to_string(batch * positions) + "), got " +
                       std::to_string(labels.size()));
  for (std::size_t index = 0; index < labels.size(); ++index) {
    require_argument(labels[index] >= 0 && labels[index] < classes, kernel, [&] {
      return "label of sample " + std::to_string(index / static_cast<std::size_t>(positions)) +
             (positions > 1
                  ? ", position " + std::to_string(index % static_cast<std::size_t>(positions))
                  : std::string()) +
             " is " + std::to_string(labels[index]) + ", expected 0 to " +
             std::to_string(classes - 1);
    });
  }
}

}  // namespace tessera::kernels
