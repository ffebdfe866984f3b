#pragma once
// A step's timeline, as either backend records it: per GPU (or rank) four tracks (its compute
// stream, its communication stream, its input reads, its memory stream's copies to and from host
// memory), each event a named span with the category of the step program's op and where its
// duration came from, and the device memory in use over the step. chrome_trace() writes the
// Chrome trace-event JSON that ui.perfetto.dev and chrome://tracing open (memory as a counter
// track), so that a measured step and a simulated one can be looked at side by side.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tessera/core/result/result_schema.hpp"
#include "tessera/core/strategy/step_program.hpp"

namespace tessera {

enum class TimelineTrack { compute = 0, communication = 1, input_reads = 2, memory_copies = 3 };

struct TimelineEvent {
  int gpu = 0;
  TimelineTrack track = TimelineTrack::compute;
  std::string name;
  OpCategory category = OpCategory::compute;
  double start_seconds = 0;
  double end_seconds = 0;
  // Where the duration came from: simulated, measured, or a compute op's profile or roofline.
  Provenance source = Provenance::simulated;
  // A wait for another GPU (a pipeline bubble): shown with the category "idle", counted in no
  // part of the breakdown, as the results leave such waits to idle.
  bool idle = false;
};

// Device memory in use on a GPU from `seconds` on (a step's timeline holds one per change).
struct MemorySample {
  int gpu = 0;
  double seconds = 0;
  double bytes = 0;
  // Of `bytes`, what each MemoryUse holds (indexed by it), where every change said what it held
  // (the simulator's; the real backend knows only the total of what stays for the whole run).
  std::optional<std::array<double, kMemoryUses>> bytes_by_use;
  bool operator==(const MemorySample&) const = default;
};

// Device memory in use over one GPU's step, from its allocations and releases in time order:
// the peak and the time average.
class MemoryTimeline {
 public:
  // `use`: what the bytes hold; a change without one leaves the samples without bytes_by_use.
  void change(double seconds, double bytes_delta, std::optional<MemoryUse> use = std::nullopt);
  // Closes the step at `end_seconds` (the average's denominator).
  void finish(double end_seconds);
  double in_use_bytes() const { return in_use_; }
  double peak_bytes() const { return peak_; }
  double average_bytes() const;
  // The samples of `gpu`, one per change.
  std::vector<MemorySample> samples(int gpu) const;

 private:
  struct Change {
    double seconds = 0;
    double bytes = 0;  // in use from then
    std::array<double, kMemoryUses> bytes_by_use{};
  };
  double in_use_ = 0, peak_ = 0, integral_ = 0, last_seconds_ = 0, end_seconds_ = 0;
  std::array<double, kMemoryUses> in_use_by_use_{};
  bool attributed_ = true;  // every change named its use
  std::vector<Change> changes_;
};

// Device memory over a step program played one op after another, each taking its compute time
// and nothing else (no communication, no copies): an estimate without a simulation. Where
// `counted` is given, only the memory of the uses it accepts (holds_feature_maps, say).
MemoryTimeline serial_memory_timeline(const StepProgram& program,
                                      bool (*counted)(MemoryUse) = nullptr);

// One process per GPU, one thread per track, times in microseconds; `backend` is "sim" or "real".
// `memory` becomes a counter track per GPU.
nlohmann::json chrome_trace(const std::vector<TimelineEvent>& events, const std::string& scenario,
                            std::size_t point, const std::string& backend,
                            const std::vector<MemorySample>& memory = {});

}  // namespace tessera
