#include "io/readahead_hint.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

namespace tessera::kernels::io {

namespace {

// Announcing pages that are cached already costs the kernel a walk over each of them (a
// noticeable share of a warm read: docs/measurements/2026-11-21.md), so runs whose first and
// last pages are resident are left out.
class PageResidency {
 public:
  PageResidency(int file, std::int64_t file_bytes) : bytes_(file_bytes) {
    if (file_bytes > 0) {
      map_ = ::mmap(nullptr, static_cast<std::size_t>(file_bytes), PROT_READ, MAP_SHARED, file, 0);
    }
  }
  ~PageResidency() {
    if (map_ != MAP_FAILED) ::munmap(map_, static_cast<std::size_t>(bytes_));
  }
  PageResidency(const PageResidency&) = delete;
  PageResidency& operator=(const PageResidency&) = delete;

  bool cached(std::int64_t offset) const {
    if (map_ == MAP_FAILED || offset < 0 || offset >= bytes_) return false;
    const std::int64_t page = ::sysconf(_SC_PAGESIZE);
    unsigned char resident = 0;
    auto* start = static_cast<char*>(map_) + offset / page * page;
    return ::mincore(start, 1, &resident) == 0 && (resident & 1) != 0;
  }

 private:
  std::int64_t bytes_;
  void* map_ = MAP_FAILED;
};

}  // namespace

std::vector<ByteRun> box_byte_runs(std::int64_t data_offset_bytes, const VolumeShape& shape,
                                   const VolumeBox& box) {
  const auto [depth, height, width] = shape.spatial;
  const std::int64_t bytes = sizeof(float);
  std::vector<ByteRun> runs;
  for (std::int64_t channel = 0; channel < shape.channels; ++channel) {
    for (std::int64_t d = box.begin[0]; d < box.end[0]; ++d) {
      const std::int64_t plane = (channel * depth + d) * height;
      const ByteRun run{
          .begin = data_offset_bytes + ((plane + box.begin[1]) * width + box.begin[2]) * bytes,
          .end = data_offset_bytes + ((plane + box.end[1] - 1) * width + box.end[2]) * bytes};
      if (!runs.empty() && runs.back().end == run.begin) {
        runs.back().end = run.end;
      } else {
        runs.push_back(run);
      }
    }
  }
  return runs;
}

void announce_box_reads(const std::string& path, std::int64_t data_offset_bytes,
                        const VolumeShape& shape, const VolumeBox& box) {
  const int file = ::open(path.c_str(), O_RDONLY);
  if (file < 0) return;
  struct stat status {};
  if (::fstat(file, &status) == 0) {
    const PageResidency residency(file, static_cast<std::int64_t>(status.st_size));
    for (const auto& run : box_byte_runs(data_offset_bytes, shape, box)) {
      if (residency.cached(run.begin) && residency.cached(run.end - 1)) continue;
      ::posix_fadvise(file, static_cast<off_t>(run.begin), static_cast<off_t>(run.end - run.begin),
                      POSIX_FADV_WILLNEED);
    }
  }
  ::close(file);
}

}  // namespace tessera::kernels::io
