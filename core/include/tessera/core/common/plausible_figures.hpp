#pragma once
// What a real machine's figures may be, with orders of magnitude to spare: beyond these a figure
// is a typo (a unit prefix or exponent off), and near-zero rates or huge sizes would push the
// simulator's times past what a double holds (SimGrid then stops: "duration is not finite").
// Latencies may be 0 and up to 1 s; the test clusters' "free" links are 1 EB/s. Cluster files,
// SimGrid platform files and memory sizes in scenarios and on the command line are held to them.
#include "tessera/core/common/quantity.hpp"

namespace tessera {

struct FigureRange {
  double least = 0;
  double most = 0;
  const char* text = "";  // "from 1 MiB to 1 EiB"

  bool holds(double value) const { return value >= least && value <= most; }
};

FigureRange plausible_range(QuantityKind kind);

// A device's memory as a scenario (memory.device_capacity) or `plan --memory-limit` caps it: from
// 1 KiB, as a CPU test of offloading caps a tiny model's to a few hundred KiB, to 1 EiB.
FigureRange memory_cap_range();

}  // namespace tessera
