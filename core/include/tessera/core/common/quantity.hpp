#pragma once
// Physical quantities in scenario and cluster files ("16 GiB", "900 GB/s", "15.7 TFLOP/s", "2 us",
// "300 W"). Values are returned in SI base units: bytes, bytes per second, FLOP per second,
// seconds, watts.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tessera {

enum class QuantityKind { bytes, bandwidth_bytes_per_second, flops_per_second, seconds, watts };

// The most bytes a memory size in a cluster or scenario file (or `plan --memory-limit`) may say:
// beyond 1 EiB a size is a typo (a unit prefix or exponent off).
inline constexpr double kLargestMemoryBytes = 1024.0 * 1024 * 1024 * 1024 * 1024 * 1024;

// Human description of the accepted syntax, used in error messages.
std::string quantity_syntax(QuantityKind kind);

// A plain number is taken as the base unit. Returns nullopt on anything malformed or negative.
std::optional<double> parse_quantity(std::string_view text, QuantityKind kind);

std::string format_bytes(double bytes);                            // "1.50 GiB"
std::string format_flops(double flops);                            // "3.20 GFLOP"
std::string format_seconds(double seconds);                        // "12.300 ms"
std::string format_count(std::int64_t count);                      // "9,437,636"
std::string counted(std::int64_t count, const std::string& noun);  // "1 node", "4 nodes"

}  // namespace tessera
