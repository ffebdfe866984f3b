#pragma once
// Checks for command-line values that CLI11's own let through.
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace tessera::app {

// CLI11's own range checks say "Value abc not in range 1 to 10000000" of a word, let NaN through
// (every comparison with it being false: a NaN of seconds measured or waited for nothing), let
// "2.5" through to an integer option (then "Could not convert"), and print the largest double in
// full for PositiveNumber. These say what is expected: a whole number written in decimal digits (no
// 0x or octal reading), or a finite number, in a range.
CLI::Validator whole_number_in(std::int64_t lowest, std::int64_t highest);
CLI::Validator number_in(double lowest, double highest);
// Finite and above 0; finite and at least 0.
extern const CLI::Validator kPositiveNumber;
extern const CLI::Validator kNonNegativeNumber;

// A file or folder name: '' would otherwise mean "not given" and be ignored without a word.
inline const CLI::Validator kNonEmptyText(
    [](std::string& text) { return text.empty() ? std::string("expected a name, got ''") : ""; },
    "");

// A sweep point's index as a user writes it: decimal digits. CLI11 reads "-1" into an unsigned
// index as 18446744073709551615 and "010" as octal 8.
inline const CLI::Validator kPointIndex(
    [](std::string& text) {
      const bool digits = !text.empty() && text.size() <= 9 &&
                          text.find_first_not_of("0123456789") == std::string::npos &&
                          (text.size() == 1 || text.front() != '0');
      return digits ? std::string()
                    : "expected a sweep point index (0, 1, 2, ...), got '" + text + "'";
    },
    "INDEX");

}  // namespace tessera::app
