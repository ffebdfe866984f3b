#include "tessera/core/cost/profile_database.hpp"

#include "tessera/core/cost/rank_passes.hpp"

#include <cstdio>
#include <sstream>

#include "tessera/core/model/layer_kind_rules.hpp"

namespace tessera {
namespace {

// A newline cannot occur inside a field (rows are lines), so it separates them unambiguously.
std::string index_key(const std::string& device, const std::string& op, Direction direction,
                      const std::string& shape, DType dtype) {
  return device + "\n" + op + "\n" + to_string(direction) + "\n" + shape + "\n" + to_string(dtype);
}

std::string per_sample(const TensorShape& shape) {
  return to_string(shape, false);
}

}  // namespace

std::string to_string(Direction direction) {
  switch (direction) {
    case Direction::forward:
      return "forward";
    case Direction::backward_data:
      return "backward_data";
    case Direction::backward_filter:
      return "backward_filter";
  }
  return "forward";
}

std::string kernel_shape_key(const Layer& layer, const std::vector<TensorShape>& inputs,
                             const TensorShape& output) {
  std::string key = to_string(layer.kind) + rules_of(layer.kind).profile_key(layer);
  for (const auto& input : inputs) key += " in " + per_sample(input);
  return key + " out " + per_sample(output);
}

bool is_transfer_op(const std::string& op) {
  return op.starts_with("copy_") || op == "allreduce" || op == "sendrecv";
}

bool describes_machine(const std::string& op) {
  return is_transfer_op(op) || op == kRankPassOp;
}

void ProfileDatabase::add(ProfileEntry entry) {
  auto& rows =
      by_kernel_[index_key(entry.device, entry.op, entry.direction, entry.shape, entry.dtype)];
  for (auto& row : rows) {
    if (row.micro_batch == entry.micro_batch && row.algorithm == entry.algorithm) {
      row = std::move(entry);
      ++replaced_;
      return;
    }
  }
  rows.push_back(std::move(entry));
  ++count_;
}

void ProfileDatabase::merge(const ProfileDatabase& later) {
  for (const auto& [key, rows] : later.by_kernel_) {
    for (const auto& row : rows) add(row);
  }
  sources_.insert(sources_.end(), later.sources_.begin(), later.sources_.end());
}

std::vector<ProfileEntry> ProfileDatabase::rows() const {
  std::vector<ProfileEntry> all;
  all.reserve(count_);
  for (const auto& [key, rows] : by_kernel_) all.insert(all.end(), rows.begin(), rows.end());
  return all;
}

std::vector<ProfileEntry> ProfileDatabase::entries_for(const std::string& device,
                                                       const std::string& op, Direction direction,
                                                       const std::string& shape,
                                                       DType dtype) const {
  auto it = by_kernel_.find(index_key(device, op, direction, shape, dtype));
  return it == by_kernel_.end() ? std::vector<ProfileEntry>{} : it->second;
}

std::vector<ProfileEntry> ProfileDatabase::entries_of_op(const std::string& device,
                                                         const std::string& op, Direction direction,
                                                         DType dtype) const {
  // Keys sort by device, op and direction first: one op's shapes are one run of the map.
  const std::string prefix = device + "\n" + op + "\n" + to_string(direction) + "\n";
  std::vector<ProfileEntry> entries;
  for (auto it = by_kernel_.lower_bound(prefix);
       it != by_kernel_.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
    for (const auto& entry : it->second) {
      if (entry.dtype == dtype) entries.push_back(entry);
    }
  }
  return entries;
}

std::optional<ProfileEntry> ProfileDatabase::best(const std::string& device, const std::string& op,
                                                  Direction direction, const std::string& shape,
                                                  DType dtype, std::int64_t micro_batch,
                                                  double workspace_limit_bytes) const {
  std::optional<ProfileEntry> best;
  for (const auto& entry : entries_for(device, op, direction, shape, dtype)) {
    if (!entry.ok || entry.micro_batch != micro_batch) continue;
    if (entry.workspace_bytes > workspace_limit_bytes) continue;
    if (!best || entry.time_seconds < best->time_seconds) best = entry;
  }
  return best;
}

std::string to_string(MicroBatchTiming timing) {
  return timing == MicroBatchTiming::in_context ? "in_context" : "alone";
}

std::string to_string(RunCaches caches) {
  switch (caches) {
    case RunCaches::unrecorded:
      return "unrecorded";
    case RunCaches::warm:
      return "warm";
    case RunCaches::flushed:
      return "flushed";
    case RunCaches::step_like:
      return "step_like";
  }
  return "unrecorded";
}

std::string ProfileDatabase::to_csv(const ProfileMetadata& metadata) const {
  std::ostringstream out;
  out << "# tessera-profile/1\n# device: " << metadata.device
      << "\n# libraries: " << metadata.libraries << "\n# created_utc: " << metadata.created_utc
      << "\n# micro_batch_timing: " << to_string(metadata.micro_batch_timing) << "\n";
  if (metadata.caches != RunCaches::unrecorded) {
    out << "# caches: " << to_string(metadata.caches) << "\n";
  }
  out << kProfileHeader << "\n";
  for (const auto& [key, entries] : by_kernel_) {
    for (const auto& e : entries) {
      char time[32], workspace[32];
      std::snprintf(time, sizeof time, "%.9g", e.time_seconds);
      std::snprintf(workspace, sizeof workspace, "%.0f", e.workspace_bytes);
      out << e.device << "," << e.op << "," << to_string(e.direction) << "," << e.shape << ","
          << to_string(e.dtype) << "," << e.micro_batch << "," << e.algorithm << "," << time << ","
          << workspace << "," << (e.ok ? "true" : "false") << "\n";
    }
  }
  return out.str();
}

}  // namespace tessera
