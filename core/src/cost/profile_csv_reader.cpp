// Reading a profile database file under the rules profile_database.hpp states: every row is
// checked before any is added, so a malformed file changes nothing.
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tessera/core/common/input_error.hpp"
#include "tessera/core/common/utf8_text.hpp"
#include "tessera/core/cost/profile_database.hpp"

namespace tessera {
namespace {

constexpr std::array<const char*, 10> kColumns{
    "device",      "op",        "direction", "shape",           "dtype",
    "micro_batch", "algorithm", "time_s",    "workspace_bytes", "ok"};
// Longer than any kernel call a training step makes by far; sums of such times stay finite.
constexpr double kMostKernelSeconds = 1e6;
// A scenario's largest mini_batch (scenario_parser.cpp): no kernel call processes more.
constexpr std::int64_t kMostMicroBatch = std::int64_t{1} << 24;
// Up to here every whole number of bytes is exact in the double the row keeps it in.
constexpr double kMostWorkspaceBytes = 9007199254740992.0;  // 2^53
constexpr std::string_view kFormatPrefix = "tessera-profile/";

// What a field held, for "got ..." in messages: quoted, control bytes shown as '?', long text cut.
std::string shown(const std::string& text) {
  if (text.empty()) return "nothing";
  std::string safe;
  for (char c : text.substr(0, 60)) {
    const auto byte = static_cast<unsigned char>(c);
    safe += byte < 0x20 || byte == 0x7f ? '?' : c;
  }
  return "'" + safe + (text.size() > 60 ? "...'" : "'");
}

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

struct Cell {
  std::string text;
  int column = 1;  // 1-based, where the field starts
};

// Every comma separates two fields: "a,b," has three, the last empty.
std::vector<Cell> split_row(const std::string& line) {
  std::vector<Cell> cells;
  std::size_t start = 0;
  while (true) {
    const auto comma = line.find(',', start);
    const auto end = comma == std::string::npos ? line.size() : comma;
    cells.push_back({line.substr(start, end - start), static_cast<int>(start) + 1});
    if (comma == std::string::npos) return cells;
    start = comma + 1;
  }
}

// One data row: each accessor returns its column's value or throws naming line, column and key.
class RowReader {
 public:
  RowReader(const std::string& file, int line, std::vector<Cell> cells)
      : file_(file), line_(line), cells_(std::move(cells)) {}

  [[noreturn]] void fail(std::size_t index, const std::string& expected) const {
    throw InputError({file_, line_, cells_[index].column}, kColumns[index],
                     "expected " + expected + ", got " + shown(cells_[index].text));
  }
  // A name as written: no field is quoted (a quote would become part of the name, which then
  // matches no kernel).
  const std::string& text(std::size_t index, const std::string& expected) const {
    const auto& text = cells_[index].text;
    if (text.empty() || text.find('"') != std::string::npos) fail(index, expected + ", unquoted");
    return text;
  }
  double number(std::size_t index, double most, const std::string& expected) const {
    const auto& text = cells_[index].text;
    double value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value) ||
        value < 0 || value > most) {
      fail(index, expected);
    }
    return value;
  }
  std::int64_t integer(std::size_t index, std::int64_t least, std::int64_t most) const {
    const auto& text = cells_[index].text;
    std::int64_t value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < least || value > most) {
      fail(index, "an integer in [" + std::to_string(least) + ", " + std::to_string(most) + "]");
    }
    return value;
  }

 private:
  const std::string& file_;
  int line_;
  std::vector<Cell> cells_;
};

Direction direction_of(const RowReader& row) {
  const auto& name = row.text(2, "forward, backward_data or backward_filter");
  if (name == "forward") return Direction::forward;
  if (name == "backward_data") return Direction::backward_data;
  if (name == "backward_filter") return Direction::backward_filter;
  row.fail(2, "forward, backward_data or backward_filter");
}

ProfileEntry read_row(const std::string& file, int line_number, const std::string& line) {
  auto cells = split_row(line);
  if (cells.size() != kColumns.size()) {
    throw InputError({file, line_number, 1}, "",
                     "expected " + std::to_string(kColumns.size()) + " comma-separated fields (" +
                         std::string(kProfileHeader) + "), got " + std::to_string(cells.size()));
  }
  const RowReader row(file, line_number, std::move(cells));
  ProfileEntry e;
  e.device = row.text(0, "the device's name (as a cluster file's gpu.model)");
  e.op = row.text(1, "the kernel's operation (a layer kind, copy or collective)");
  e.direction = direction_of(row);
  e.shape = row.text(3, "the kernel's shape key");
  try {
    e.dtype = dtype_from_string(row.text(4, "float32, float16 or bfloat16"));
  } catch (const std::invalid_argument&) {
    row.fail(4, "float32, float16 or bfloat16");
  }
  e.micro_batch = row.integer(5, 1, kMostMicroBatch);
  e.algorithm = row.text(6, "the algorithm's name");
  e.time_seconds =
      row.number(7, kMostKernelSeconds, "a finite number of seconds in [0, 1e6] for one call");
  e.workspace_bytes = row.number(8, kMostWorkspaceBytes, "a whole number of bytes in [0, 2^53]");
  if (e.workspace_bytes != std::floor(e.workspace_bytes)) {
    row.fail(8, "a whole number of bytes in [0, 2^53]");
  }
  const auto& ok = row.text(9, "true or false");
  if (ok != "true" && ok != "false") row.fail(9, "true or false");
  e.ok = ok == "true";
  e.where = {file, line_number, 1};
  return e;
}

// A newline cannot occur in a field, so it separates the key's parts unambiguously.
std::string row_key(const ProfileEntry& e) {
  return e.device + "\n" + e.op + "\n" + to_string(e.direction) + "\n" + e.shape + "\n" +
         to_string(e.dtype) + "\n" + std::to_string(e.micro_batch) + "\n" + e.algorithm;
}

// "# name: value" comments carry the file's metadata; "# tessera-profile/N" its format.
void read_comment(const std::string& file, int line_number, const std::string& line,
                  ProfileMetadata& metadata, std::map<std::string, int>& line_of_name) {
  const std::string body = trim(line.substr(1));
  if (body.starts_with(kFormatPrefix) && body != std::string(kFormatPrefix) + "1") {
    throw InputError(
        {file, line_number, 1}, "format",
        "expected tessera-profile/1 (the only format this build reads), got " + shown(body));
  }
  const auto colon = body.find(':');
  if (colon == std::string::npos) return;
  const auto name = trim(body.substr(0, colon));
  const auto value = trim(body.substr(colon + 1));
  // Two lines saying how the file was measured would leave the later one silently right.
  for (const char* said_once : {"device", "micro_batch_timing", "caches"}) {
    if (name != said_once) continue;
    const auto [earlier, first] = line_of_name.emplace(name, line_number);
    if (!first) {
      throw InputError({file, line_number, 1}, name,
                       "repeats line " + std::to_string(earlier->second) +
                           "; a profile says it once: keep one line");
    }
  }
  if (name == "device") metadata.device = value;
  if (name == "libraries") metadata.libraries = value;
  if (name == "created_utc") metadata.created_utc = value;
  if (name == "micro_batch_timing") {
    if (value == to_string(MicroBatchTiming::alone)) {
      metadata.micro_batch_timing = MicroBatchTiming::alone;
    } else if (value == to_string(MicroBatchTiming::in_context)) {
      metadata.micro_batch_timing = MicroBatchTiming::in_context;
    } else {
      throw InputError({file, line_number, 1}, "micro_batch_timing",
                       "expected alone or in_context, got " + shown(value));
    }
  }
  if (name == "caches") {
    constexpr std::array recorded{RunCaches::warm, RunCaches::flushed, RunCaches::step_like};
    const auto match = std::find_if(recorded.begin(), recorded.end(),
                                    [&](RunCaches caches) { return to_string(caches) == value; });
    if (match == recorded.end()) {
      throw InputError({file, line_number, 1}, "caches",
                       "expected warm, flushed or step_like, got " + shown(value));
    }
    metadata.caches = *match;
  }
}

}  // namespace

void ProfileDatabase::load_csv_text(const std::string& text, const std::string& file_name) {
  require_utf8(text, file_name);
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  int header_line = 0;
  ProfileMetadata metadata;
  std::vector<ProfileEntry> read;
  std::map<std::string, int> line_of_key;
  std::map<std::string, int> line_of_metadata;
  while (std::getline(lines, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (line[0] == '#') {
      read_comment(file_name, number, line, metadata, line_of_metadata);
      continue;
    }
    if (header_line == 0) {
      if (line != kProfileHeader) {
        throw InputError({file_name, number, 1}, "header",
                         "expected the profile header '" + std::string(kProfileHeader) + "', got " +
                             shown(line));
      }
      header_line = number;
      continue;
    }
    auto entry = read_row(file_name, number, line);
    const auto [earlier, first] = line_of_key.emplace(row_key(entry), number);
    if (!first) {
      throw InputError({file_name, number, 1}, "row",
                       "repeats line " + std::to_string(earlier->second) +
                           " (same device, op, direction, shape, dtype, micro_batch and "
                           "algorithm); a profile holds one measurement per key: keep one row");
    }
    read.push_back(std::move(entry));
  }
  if (header_line == 0) {
    throw InputError({file_name, 1, 1}, "",
                     "no measurements: expected the profile header '" +
                         std::string(kProfileHeader) + "' and rows, got none");
  }
  if (read.empty()) {
    throw InputError({file_name, header_line, 1}, "", "no measurements: no row follows the header");
  }
  for (auto& entry : read) add(std::move(entry));
  sources_.push_back(metadata);
}

void ProfileDatabase::load_csv(const std::string& path) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) {
    throw InputError({path, 0, 0}, "", "is a directory; expected a profile database (CSV)");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({path, 0, 0}, "", "cannot open the profile database (does it exist?)");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError({path, 0, 0}, "", "cannot read the profile database");
  load_csv_text(text.str(), path);
}

}  // namespace tessera
