#include "tessera/kernels/io/sample_prefetcher.hpp"

#include <chrono>

#include "tessera/kernels/io/sample_reader.hpp"

namespace tessera::kernels::io {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::size_t slot_of(std::int64_t position) {
  return static_cast<std::size_t>(position % 2);
}

}  // namespace

SamplePrefetcher::SamplePrefetcher(std::vector<std::string> paths, const VolumeBox& box,
                                   const SpatialHalo& halo, bool read_ahead)
    : paths_(std::move(paths)), box_(box), halo_(halo), read_ahead_(read_ahead), reader_([this] {
        read_all();
      }) {}

SamplePrefetcher::~SamplePrefetcher() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  reader_.join();
}

void SamplePrefetcher::read_all() {
  for (std::int64_t position = 0; position < static_cast<std::int64_t>(paths_.size()); ++position) {
    Slot& slot = slots_[slot_of(position)];
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] {
        return stopping_ || (!slot.filled && (read_ahead_ || requested_ > position));
      });
      if (stopping_) return;
    }
    try {
      read_into(slot, position);  // the slot is this thread's until marked filled
    } catch (...) {
      std::lock_guard lock(mutex_);
      failure_ = std::current_exception();
      failure_position_ = position;
      changed_.notify_all();
      return;
    }
    {
      std::lock_guard lock(mutex_);
      slot.filled = true;
      ++statistics_.samples;
      statistics_.bytes +=
          static_cast<double>((slot.buffer.size() + slot.sample.targets.size()) * sizeof(float));
      statistics_.read_seconds += slot.sample.read_seconds;
    }
    changed_.notify_all();
  }
}

void SamplePrefetcher::read_into(Slot& slot, std::int64_t position) {
  const auto start = Clock::now();
  const auto& path = paths_[static_cast<std::size_t>(position)];
  SampleReader reader(path);
  const VolumeBox region = with_halo(box_, halo_, reader.shape());
  slot.buffer.resize(static_cast<std::size_t>(sub_volume_floats(reader.shape(), region)));
  reader.read_volume(region, slot.buffer);
  slot.sample = PrefetchedSample{.position = position,
                                 .path = path,
                                 .region = region,
                                 .volume = slot.buffer,
                                 .targets = reader.read_targets(box_)};
  slot.sample.read_seconds = seconds_since(start);
}

const PrefetchedSample* SamplePrefetcher::next() {
  std::unique_lock lock(mutex_);
  if (held_slot_) {
    slots_[*held_slot_].filled = false;
    held_slot_.reset();
    changed_.notify_all();
  }
  if (next_position_ == static_cast<std::int64_t>(paths_.size())) return nullptr;
  requested_ = next_position_ + 1;
  changed_.notify_all();
  Slot& slot = slots_[slot_of(next_position_)];
  const auto ready = [&] { return slot.filled || failure_position_ == next_position_; };
  double stall_seconds = 0;
  if (!ready()) {
    const auto start = Clock::now();
    changed_.wait(lock, ready);
    stall_seconds = seconds_since(start);
  }
  statistics_.stall_seconds += stall_seconds;
  if (!slot.filled) std::rethrow_exception(failure_);
  slot.sample.stall_seconds = stall_seconds;
  held_slot_ = slot_of(next_position_);
  ++next_position_;
  return &slot.sample;
}

ReadStatistics SamplePrefetcher::statistics() const {
  std::lock_guard lock(mutex_);
  return statistics_;
}

}  // namespace tessera::kernels::io
