#pragma once

#include <cstddef>
#include <functional>

namespace tessera {

// Calls `work(i)` for every i in [0, count) on `threads` threads (the caller's among them), each
// taking every threads-th index, so that costly and cheap stretches of the range are shared
// alike. `work` must touch only what its index owns. Returns when every call has; the first
// thread's first exception, if any, is rethrown then.
void for_each_index_in_threads(std::size_t count, std::size_t threads,
                               const std::function<void(std::size_t)>& work);

}  // namespace tessera
