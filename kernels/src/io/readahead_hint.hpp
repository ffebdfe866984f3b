#pragma once
// A depth slab of a C,D,H,W volume is C runs of bytes, one per channel, that HDF5 reads one after
// another; when the pages are not cached each run waits for its own disk seek. Announcing every
// run to the kernel first (posix_fadvise WILLNEED) lets it fetch them concurrently. Costs a few
// system calls when the pages are cached already.
#include <cstdint>
#include <string>
#include <vector>

#include "tessera/kernels/io/volume_box.hpp"

namespace tessera::kernels::io {

struct ByteRun {
  std::int64_t begin = 0;
  std::int64_t end = 0;  // exclusive
  bool operator==(const ByteRun&) const = default;
};

// The byte runs of `box` (every channel) in a contiguous float32 `shape` volume starting at
// `data_offset_bytes`: per channel and depth plane the span from the box's first row to its last,
// touching spans merged, so a depth slab is one run per channel.
std::vector<ByteRun> box_byte_runs(std::int64_t data_offset_bytes, const VolumeShape& shape,
                                   const VolumeBox& box);

// `data_offset_bytes`: where a contiguous float32 `shape` volume starts in `path`. Best effort:
// a file that cannot be opened is left to the HDF5 read to report.
void announce_box_reads(const std::string& path, std::int64_t data_offset_bytes,
                        const VolumeShape& shape, const VolumeBox& box);

}  // namespace tessera::kernels::io
