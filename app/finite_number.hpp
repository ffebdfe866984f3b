#pragma once
// CLI11's number checks (PositiveNumber, Range, ...) let NaN through, every comparison with it
// being false; a NaN of seconds then measured or waited for nothing. Added to every option that
// takes a real number.
#include <cmath>
#include <string>

#include <CLI/CLI.hpp>

namespace tessera::app {

inline const CLI::Validator kFiniteNumber(
    [](std::string& text) {
      double value = 0;
      if (!CLI::detail::lexical_cast(text, value) || !std::isfinite(value)) {
        return "expected a finite number, got '" + text + "'";
      }
      return std::string();
    },
    "FINITE");

}  // namespace tessera::app
