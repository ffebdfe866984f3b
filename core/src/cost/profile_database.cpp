#include "tessera/core/profile_database.hpp"

#include <charconv>
#include <fstream>
#include <sstream>

#include "tessera/core/input_error.hpp"

namespace tessera {
namespace {

const char* const kHeader =
    "device,op,direction,shape,dtype,micro_batch,algorithm,time_s,workspace_bytes,ok";

std::string index_key(const std::string& device, const std::string& op, Direction direction,
                      const std::string& shape, DType dtype) {
  return device + "|" + op + "|" + to_string(direction) + "|" + shape + "|" + to_string(dtype);
}

std::string axes(const AxisValues& values) {
  std::string text;
  for (auto v : values) text += (text.empty() ? "" : "x") + std::to_string(v);
  return text;
}

std::string per_sample(const TensorShape& shape) {
  return to_string(shape, false);
}

template <typename T>
bool parse_number(const std::string& text, T& value) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
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
  std::string key = to_string(layer.kind);
  if (const auto* conv = std::get_if<ConvolutionParams>(&layer.params)) {
    key += " k" + axes(conv->kernel) + " s" + axes(conv->stride) + " p" + axes(conv->padding) +
           " d" + axes(conv->dilation) + " g" + std::to_string(conv->groups) +
           (conv->bias ? " bias" : "");
  } else if (const auto* pool = std::get_if<PoolingParams>(&layer.params)) {
    key += std::string(pool->mode == PoolMode::max ? " max" : " avg") + " k" + axes(pool->kernel) +
           " s" + axes(pool->stride) + " p" + axes(pool->padding);
  } else if (const auto* fc = std::get_if<FullyConnectedParams>(&layer.params)) {
    key += fc->bias ? " bias" : "";
  }
  for (const auto& input : inputs) key += " in " + per_sample(input);
  return key + " out " + per_sample(output);
}

void ProfileDatabase::add(ProfileEntry entry) {
  by_kernel_[index_key(entry.device, entry.op, entry.direction, entry.shape, entry.dtype)]
      .push_back(std::move(entry));
  ++count_;
}

std::vector<ProfileEntry> ProfileDatabase::entries_for(const std::string& device,
                                                       const std::string& op, Direction direction,
                                                       const std::string& shape,
                                                       DType dtype) const {
  auto it = by_kernel_.find(index_key(device, op, direction, shape, dtype));
  return it == by_kernel_.end() ? std::vector<ProfileEntry>{} : it->second;
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

void ProfileDatabase::load_csv_text(const std::string& text, const std::string& file_name) {
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  bool header_seen = false;
  ProfileMetadata metadata;
  while (std::getline(lines, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (line[0] == '#') {
      auto colon = line.find(':');
      if (colon == std::string::npos) continue;
      const auto name = line.substr(2, colon - 2);
      const auto value = colon + 2 <= line.size() ? line.substr(colon + 2) : std::string();
      if (name == "device") metadata.device = value;
      if (name == "libraries") metadata.libraries = value;
      if (name == "created_utc") metadata.created_utc = value;
      continue;
    }
    if (!header_seen) {
      if (line != kHeader) {
        throw InputError({file_name, number, 1}, "header",
                         std::string("expected the profile header '") + kHeader + "'");
      }
      header_seen = true;
      continue;
    }
    std::vector<std::string> f;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) f.push_back(cell);
    if (f.size() != 10) {
      throw InputError({file_name, number, 1}, "",
                       "expected 10 comma-separated fields, got " + std::to_string(f.size()));
    }
    ProfileEntry e;
    e.device = f[0];
    e.op = f[1];
    bool ok = true;
    if (f[2] == "forward") {
      e.direction = Direction::forward;
    } else if (f[2] == "backward_data") {
      e.direction = Direction::backward_data;
    } else if (f[2] == "backward_filter") {
      e.direction = Direction::backward_filter;
    } else {
      throw InputError({file_name, number, 1}, "direction",
                       "expected forward, backward_data or backward_filter, got '" + f[2] + "'");
    }
    e.shape = f[3];
    try {
      e.dtype = dtype_from_string(f[4]);
    } catch (const std::invalid_argument&) {
      throw InputError({file_name, number, 1}, "dtype", "expected float32, float16 or bfloat16");
    }
    ok = parse_number(f[5], e.micro_batch) && e.micro_batch > 0;
    if (!ok) throw InputError({file_name, number, 1}, "micro_batch", "expected a positive integer");
    e.algorithm = f[6];
    if (!parse_number(f[7], e.time_seconds) || e.time_seconds < 0) {
      throw InputError({file_name, number, 1}, "time_s",
                       "expected seconds >= 0, got '" + f[7] + "'");
    }
    if (!parse_number(f[8], e.workspace_bytes) || e.workspace_bytes < 0) {
      throw InputError({file_name, number, 1}, "workspace_bytes", "expected bytes >= 0");
    }
    if (f[9] != "true" && f[9] != "false") {
      throw InputError({file_name, number, 1}, "ok", "expected true or false");
    }
    e.ok = f[9] == "true";
    add(std::move(e));
  }
  if (!header_seen) throw InputError({file_name, 1, 1}, "", "no profile header found");
  sources_.push_back(metadata);
}

void ProfileDatabase::load_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({path, 0, 0}, "", "cannot open the profile database");
  std::ostringstream text;
  text << in.rdbuf();
  load_csv_text(text.str(), path);
}

std::string ProfileDatabase::to_csv(const ProfileMetadata& metadata) const {
  std::ostringstream out;
  out << "# tessera-profile/1\n# device: " << metadata.device
      << "\n# libraries: " << metadata.libraries << "\n# created_utc: " << metadata.created_utc
      << "\n"
      << kHeader << "\n";
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
