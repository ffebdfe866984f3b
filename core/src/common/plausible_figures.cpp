#include "tessera/core/common/plausible_figures.hpp"

namespace tessera {

FigureRange plausible_range(QuantityKind kind) {
  switch (kind) {
    case QuantityKind::bytes:
      return {1024.0 * 1024, kLargestMemoryBytes, "from 1 MiB to 1 EiB"};
    case QuantityKind::bandwidth_bytes_per_second:
      return {1e3, 1e18, "from 1 kB/s to 1 EB/s"};
    case QuantityKind::flops_per_second:
      return {1e6, 1e18, "from 1 MFLOP/s to 1 EFLOP/s"};
    case QuantityKind::seconds:
      return {0, 1, "from 0 s to 1 s"};
    case QuantityKind::watts:
      return {1, 1e5, "from 1 W to 100 kW"};
  }
  return {};
}

FigureRange memory_cap_range() {
  return {1024, kLargestMemoryBytes, "from 1 KiB to 1 EiB"};
}

}  // namespace tessera
