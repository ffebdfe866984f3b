#include "tessera/core/result/timeline.hpp"

#include <algorithm>
#include <set>

namespace tessera {

void MemoryTimeline::change(double seconds, double bytes_delta, std::optional<MemoryUse> use) {
  integral_ += in_use_ * std::max(0.0, seconds - last_seconds_);
  last_seconds_ = std::max(last_seconds_, seconds);
  in_use_ += bytes_delta;
  peak_ = std::max(peak_, in_use_);
  if (use) {
    in_use_by_use_[static_cast<std::size_t>(*use)] += bytes_delta;
  } else {
    attributed_ = false;
  }
  if (changes_.empty() || changes_.back().seconds != last_seconds_) {
    changes_.push_back({.seconds = last_seconds_});
  }
  changes_.back().bytes = in_use_;
  changes_.back().bytes_by_use = in_use_by_use_;
}

void MemoryTimeline::finish(double end_seconds) {
  integral_ += in_use_ * std::max(0.0, end_seconds - last_seconds_);
  last_seconds_ = std::max(last_seconds_, end_seconds);
  end_seconds_ = end_seconds;
}

double MemoryTimeline::average_bytes() const {
  return end_seconds_ > 0 ? integral_ / end_seconds_ : in_use_;
}

std::vector<MemorySample> MemoryTimeline::samples(int gpu) const {
  std::vector<MemorySample> samples;
  for (const auto& change : changes_) {
    samples.push_back({gpu, change.seconds, change.bytes});
    if (attributed_) samples.back().bytes_by_use = change.bytes_by_use;
  }
  return samples;
}

MemoryTimeline serial_memory_timeline(const StepProgram& program, bool (*counted)(MemoryUse)) {
  MemoryTimeline timeline;
  double seconds = 0;
  for (const auto& op : program.ops) {
    if (op.kind == StepOpKind::compute || op.kind == StepOpKind::update) seconds += op.seconds;
    if (counted != nullptr && !counted(op.memory)) continue;
    if (op.kind == StepOpKind::allocate) timeline.change(seconds, op.bytes, op.memory);
    if (op.kind == StepOpKind::release) timeline.change(seconds, -op.bytes, op.memory);
  }
  timeline.finish(seconds);
  return timeline;
}

nlohmann::json chrome_trace(const std::vector<TimelineEvent>& events, const std::string& scenario,
                            std::size_t point, const std::string& backend,
                            const std::vector<MemorySample>& memory) {
  static const char* const tracks[] = {"compute", "communication", "input reads", "memory copies"};
  const std::string unit = backend == "real" ? "rank " : "GPU ";
  nlohmann::json trace_events = nlohmann::json::array();
  std::set<int> gpus;
  for (const auto& event : events) gpus.insert(event.gpu);
  for (const auto& sample : memory) gpus.insert(sample.gpu);
  for (int gpu : gpus) {
    trace_events.push_back({{"ph", "M"},
                            {"name", "process_name"},
                            {"pid", gpu},
                            {"tid", 0},
                            {"args", {{"name", unit + std::to_string(gpu)}}}});
    for (int track = 0; track < 4; ++track) {
      trace_events.push_back({{"ph", "M"},
                              {"name", "thread_name"},
                              {"pid", gpu},
                              {"tid", track},
                              {"args", {{"name", tracks[track]}}}});
    }
  }
  for (const auto& event : events) {
    trace_events.push_back({{"ph", "X"},
                            {"name", event.name},
                            {"cat", event.idle ? std::string("idle") : to_string(event.category)},
                            {"pid", event.gpu},
                            {"tid", static_cast<int>(event.track)},
                            {"ts", event.start_seconds * 1e6},
                            {"dur", (event.end_seconds - event.start_seconds) * 1e6},
                            {"args", {{"source", to_string(event.source)}}}});
  }
  // The total, and where the uses are known a second counter with one series per use (stacked,
  // they add up to the total).
  for (const auto& sample : memory) {
    trace_events.push_back({{"ph", "C"},
                            {"name", "device memory in use"},
                            {"pid", sample.gpu},
                            {"ts", sample.seconds * 1e6},
                            {"args", {{"bytes", sample.bytes}}}});
    if (!sample.bytes_by_use) continue;
    nlohmann::json series = nlohmann::json::object();
    for (int use = 0; use < kMemoryUses; ++use) {
      series[to_string(static_cast<MemoryUse>(use))] =
          (*sample.bytes_by_use)[static_cast<std::size_t>(use)];
    }
    trace_events.push_back({{"ph", "C"},
                            {"name", "device memory by use"},
                            {"pid", sample.gpu},
                            {"ts", sample.seconds * 1e6},
                            {"args", series}});
  }
  return {{"traceEvents", trace_events},
          {"displayTimeUnit", "ms"},
          {"otherData", {{"scenario", scenario}, {"point", point}, {"backend", backend}}}};
}

}  // namespace tessera
