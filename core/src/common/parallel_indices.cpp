#include "tessera/core/common/parallel_indices.hpp"

#include <algorithm>
#include <exception>
#include <thread>
#include <vector>

namespace tessera {

void for_each_index_in_threads(std::size_t count, std::size_t threads,
                               const std::function<void(std::size_t)>& work) {
  const std::size_t stride = std::clamp<std::size_t>(threads, 1, std::max<std::size_t>(count, 1));
  std::vector<std::exception_ptr> failures(stride);
  auto every_stride = [&](std::size_t first) {
    try {
      for (std::size_t i = first; i < count; i += stride) work(i);
    } catch (...) {
      failures[first] = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> workers;
    workers.reserve(stride - 1);
    for (std::size_t first = 1; first < stride; ++first) workers.emplace_back(every_stride, first);
    every_stride(0);
  }
  for (const auto& failure : failures) {
    if (failure) std::rethrow_exception(failure);
  }
}

}  // namespace tessera
