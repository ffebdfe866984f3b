#include "tessera/core/common/quantity.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace tessera {
namespace {

struct Prefix {
  std::string_view symbol;
  double factor;
};

// Binary prefixes first so "Gi" is not read as "G" followed by "i".
constexpr std::array<Prefix, 13> kPrefixes{{{"Ki", 1024.0},
                                            {"Mi", 1024.0 * 1024},
                                            {"Gi", 1024.0 * 1024 * 1024},
                                            {"Ti", 1024.0 * 1024 * 1024 * 1024},
                                            {"Pi", 1024.0 * 1024 * 1024 * 1024 * 1024},
                                            {"Ei", 1024.0 * 1024 * 1024 * 1024 * 1024 * 1024},
                                            {"k", 1e3},
                                            {"K", 1e3},
                                            {"M", 1e6},
                                            {"G", 1e9},
                                            {"T", 1e12},
                                            {"P", 1e15},
                                            {"E", 1e18}}};

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// Scale of a unit without its prefix: 1 for the base unit, 1/8 for bits, nullopt if foreign.
std::optional<double> base_unit_scale(std::string_view unit, QuantityKind kind) {
  switch (kind) {
    case QuantityKind::bytes:
      if (unit == "B") return 1.0;
      return std::nullopt;
    case QuantityKind::bandwidth_bytes_per_second:
      if (unit == "B/s") return 1.0;
      if (unit == "b/s" || unit == "bps") return 1.0 / 8.0;
      return std::nullopt;
    case QuantityKind::flops_per_second:
      if (unit == "FLOP/s" || unit == "FLOPS" || unit == "flop/s") return 1.0;
      return std::nullopt;
    case QuantityKind::seconds:
      if (unit == "s") return 1.0;
      if (unit == "ms") return 1e-3;
      if (unit == "us") return 1e-6;
      if (unit == "ns") return 1e-9;
      return std::nullopt;
    case QuantityKind::watts:
      if (unit == "W") return 1.0;
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<double> unit_scale(std::string_view unit, QuantityKind kind) {
  if (unit.empty()) return 1.0;
  if (auto scale = base_unit_scale(unit, kind)) return scale;
  if (kind == QuantityKind::seconds) return std::nullopt;  // no "ks" or "Gs"
  for (const auto& prefix : kPrefixes) {
    if (unit.substr(0, prefix.symbol.size()) != prefix.symbol) continue;
    if (auto scale = base_unit_scale(unit.substr(prefix.symbol.size()), kind)) {
      return prefix.factor * *scale;
    }
  }
  return std::nullopt;
}

std::string format_scaled(double value, const char* const* units, int unit_count, double step) {
  int unit = 0;
  double magnitude = std::fabs(value);
  while (unit + 1 < unit_count && magnitude >= step) {
    magnitude /= step;
    value /= step;
    ++unit;
  }
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.2f %s", value, units[unit]);
  return buffer;
}

}  // namespace

std::string quantity_syntax(QuantityKind kind) {
  switch (kind) {
    case QuantityKind::bytes:
      return "a size such as 512 MiB, 16 GiB or 1e9 (bytes)";
    case QuantityKind::bandwidth_bytes_per_second:
      return "a bandwidth such as 900 GB/s, 100 Gb/s or 25e9 (bytes per second)";
    case QuantityKind::flops_per_second:
      return "a compute rate such as 15.7 TFLOP/s or 1e12 (FLOP per second)";
    case QuantityKind::seconds:
      return "a duration such as 2 us, 1.5 ms or 0.01 (seconds)";
    case QuantityKind::watts:
      return "a power such as 300 W or 0.7 kW (watts)";
  }
  return "a quantity";
}

std::optional<double> parse_quantity(std::string_view text, QuantityKind kind) {
  text = trim(text);
  double value = 0.0;
  const auto* begin = text.data();
  const auto* end = text.data() + text.size();
  auto [rest, error] = std::from_chars(begin, end, value);
  if (error != std::errc() || rest == begin) return std::nullopt;
  if (!std::isfinite(value) || value < 0.0) return std::nullopt;
  auto scale = unit_scale(trim(std::string_view(rest, static_cast<std::size_t>(end - rest))), kind);
  if (!scale) return std::nullopt;
  double result = value * *scale;
  if (!std::isfinite(result)) return std::nullopt;
  return result;
}

std::string format_bytes(double bytes) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  return format_scaled(bytes, units, 6, 1024.0);
}

std::string format_flops(double flops) {
  static const char* const units[] = {"FLOP", "kFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP"};
  return format_scaled(flops, units, 7, 1000.0);
}

std::string format_seconds(double seconds) {
  char buffer[64];
  double magnitude = std::fabs(seconds);
  if (magnitude >= 1.0 || magnitude == 0.0) {
    std::snprintf(buffer, sizeof buffer, "%.3f s", seconds);
  } else if (magnitude >= 1e-3) {
    std::snprintf(buffer, sizeof buffer, "%.3f ms", seconds * 1e3);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.3f us", seconds * 1e6);
  }
  return buffer;
}

std::string format_count(std::int64_t count) {
  // The magnitude as unsigned, so that INT64_MIN has one too.
  const std::uint64_t magnitude =
      count < 0 ? 0 - static_cast<std::uint64_t>(count) : static_cast<std::uint64_t>(count);
  std::string digits = std::to_string(magnitude);
  std::string grouped;
  int since_separator = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (since_separator == 3) {
      grouped.insert(grouped.begin(), ',');
      since_separator = 0;
    }
    grouped.insert(grouped.begin(), *it);
    ++since_separator;
  }
  return count < 0 ? "-" + grouped : grouped;
}

std::string counted(std::int64_t count, const std::string& noun) {
  return format_count(count) + " " + noun + (count == 1 ? "" : "s");
}

}  // namespace tessera
