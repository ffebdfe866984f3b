#include "option_checks.hpp"

#include <charconv>
#include <cmath>
#include <limits>

namespace tessera::app {
namespace {

std::string shown(double value) {
  std::string text = std::to_string(value);
  // 3600.000000 -> 3600, 0.500000 -> 0.5
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') text.pop_back();
  return text;
}

CLI::Validator real_number_check(const std::string& expected, double lowest, double highest,
                                 bool lowest_included, const std::string& description) {
  return CLI::Validator(
      [=](std::string& text) {
        double value = 0;
        const bool read = CLI::detail::lexical_cast(text, value) && std::isfinite(value);
        if (read && (lowest_included ? value >= lowest : value > lowest) && value <= highest) {
          return std::string();
        }
        return "expected " + expected + ", got '" + text + "'";
      },
      description);
}

}  // namespace

CLI::Validator whole_number_in(std::int64_t lowest, std::int64_t highest) {
  const std::string expected =
      "a whole number from " + std::to_string(lowest) + " to " + std::to_string(highest);
  return CLI::Validator(
      [=](std::string& text) {
        std::int64_t value = 0;
        const char* const end = text.data() + text.size();
        const auto [stop, error] = std::from_chars(text.data(), end, value);
        const bool decimal = !text.empty() && error == std::errc() && stop == end &&
                             !(text.size() > 1 && text[0] == '0');
        if (decimal && value >= lowest && value <= highest) return std::string();
        return "expected " + expected + ", got '" + text + "'";
      },
      "[" + std::to_string(lowest) + " - " + std::to_string(highest) + "]");
}

CLI::Validator number_in(double lowest, double highest) {
  return real_number_check("a number from " + shown(lowest) + " to " + shown(highest), lowest,
                           highest, true, "[" + shown(lowest) + " - " + shown(highest) + "]");
}

const CLI::Validator kPositiveNumber = real_number_check(
    "a finite number above 0", 0.0, std::numeric_limits<double>::max(), false, "POSITIVE");
const CLI::Validator kNonNegativeNumber = real_number_check(
    "a finite number of at least 0", 0.0, std::numeric_limits<double>::max(), true, "NONNEGATIVE");

}  // namespace tessera::app
