#include "tessera/core/strategy/sample_holders.hpp"

#include "tessera/core/common/counter_hash.hpp"

namespace tessera {

std::int64_t sample_holder(std::uint64_t draw, std::int64_t replica, std::int64_t sample,
                           std::int64_t nodes) {
  if (nodes <= 1) return 0;
  // The modulo's bias is below nodes / 2^64.
  return static_cast<std::int64_t>(counter_key(draw, replica, sample) %
                                   static_cast<std::uint64_t>(nodes));
}

}  // namespace tessera
