#pragma once
// Reads a rank's sub-volume of sample i+1 on a background thread while the caller computes on
// sample i: two buffers, one held by the caller, one being filled. It measures how long reading
// took and how long the caller stalled waiting for it, which is what the step's input costs.
#include <array>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "tessera/kernels/io/sample_file_format.hpp"

namespace tessera::kernels::io {

struct ReadStatistics {
  std::int64_t samples = 0;  // read so far (including the one read ahead)
  double bytes = 0;          // volume and targets bytes read
  double read_seconds = 0;   // reading thread: opening, checking and reading the files
  double stall_seconds = 0;  // caller: time blocked in next() waiting for a sample
  double read_bytes_per_second() const { return read_seconds > 0 ? bytes / read_seconds : 0; }
};

struct PrefetchedSample {
  std::int64_t position = 0;  // in the order given
  std::string path;
  VolumeBox region;               // the box widened by its halo, clipped to the volume
  std::span<const float> volume;  // C x region, row-major
  // CosmoFlow's four values, or the classes of the box's voxels (3D U-Net layout; the box
  // without its halo).
  std::vector<float> targets;
  double read_seconds = 0;
  double stall_seconds = 0;  // how long next() waited for this sample
};

class SamplePrefetcher {
 public:
  // Reads `paths` in order, each one's `box` widened by `halo` planes (clipped), and starts on
  // the first at once. Without `read_ahead` (io.prefetch: false) a sample is read only once
  // next() asks for it, so the caller waits for every read.
  SamplePrefetcher(std::vector<std::string> paths, const VolumeBox& box,
                   const SpatialHalo& halo = {}, bool read_ahead = true);
  ~SamplePrefetcher();  // stops the reading thread, leaving an unfinished read to complete
  SamplePrefetcher(const SamplePrefetcher&) = delete;
  SamplePrefetcher& operator=(const SamplePrefetcher&) = delete;

  // The next sample, once read; nullptr after the last. The sample stays valid until the next
  // call, which hands its buffer back for reading ahead. A failed read (e.g. tessera::InputError
  // for a malformed file) is rethrown here, at that sample's turn.
  const PrefetchedSample* next();
  ReadStatistics statistics() const;

 private:
  struct Slot {
    PrefetchedSample sample;
    std::vector<float> buffer;
    bool filled = false;
  };

  void read_all();
  void read_into(Slot& slot, std::int64_t position);

  const std::vector<std::string> paths_;
  const VolumeBox box_;
  const SpatialHalo halo_;
  const bool read_ahead_;
  std::array<Slot, 2> slots_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::int64_t next_position_ = 0;
  std::int64_t requested_ = 0;  // positions next() has asked for (read_ahead_ false)
  std::optional<std::size_t> held_slot_;
  bool stopping_ = false;
  std::exception_ptr failure_;
  std::int64_t failure_position_ = -1;
  ReadStatistics statistics_;
  std::thread reader_;  // last: starts once everything above exists
};

}  // namespace tessera::kernels::io
