#pragma once
// A depth slab of a C,D,H,W volume is C runs of bytes, one per channel, that HDF5 reads one after
// another; when the pages are not cached each run waits for its own disk seek. Announcing every
// run to the kernel first (posix_fadvise WILLNEED) lets it fetch them concurrently. Costs a few
// system calls when the pages are cached already.
#include <cstdint>
#include <string>

#include "tessera/kernels/io/volume_box.hpp"

namespace tessera::kernels::io {

// `data_offset_bytes`: where a contiguous float32 `shape` volume starts in `path`. Best effort:
// a file that cannot be opened is left to the HDF5 read to report.
void announce_box_reads(const std::string& path, std::int64_t data_offset_bytes,
                        const VolumeShape& shape, const VolumeBox& box);

}  // namespace tessera::kernels::io
