#include "tessera/core/common/utf8_text.hpp"

#include <cstdint>
#include <cstdio>

#include "tessera/core/common/input_error.hpp"

namespace tessera {
namespace {

// The length of the well-formed sequence at `at`, or 0 where it is not one (Unicode 15, table
// 3-7: the second byte's range depends on the first, which excludes overlong forms and
// surrogates).
std::size_t sequence_length(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<std::uint8_t>(text[at + i]); };
  const std::uint8_t lead = byte(0);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  std::uint8_t second_low = 0x80;
  std::uint8_t second_high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) second_low = 0xA0;
    if (lead == 0xED) second_high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) second_low = 0x90;
    if (lead == 0xF4) second_high = 0x8F;
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  if (byte(1) < second_low || byte(1) > second_high) return 0;
  for (std::size_t i = 2; i < length; ++i) {
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  }
  return length;
}

[[noreturn]] void reject_byte(const std::string& file, int line, int column, char character,
                              const std::string& why) {
  char shown[8];
  std::snprintf(shown, sizeof shown, "0x%02X", static_cast<std::uint8_t>(character));
  throw InputError({file, line, column}, "",
                   std::string("expected UTF-8 text, got the byte ") + shown + ", " + why);
}

}  // namespace

void require_utf8(std::string_view text, const std::string& file) {
  int line = 1;
  int column = 1;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = sequence_length(text, at);
    if (length == 0) {
      reject_byte(file, line, column, text[at],
                  "which does not begin or continue a UTF-8 character (save the file as UTF-8)");
    }
    // Not text (YAML 1.2 section 5.1 excludes them from a stream): a NUL byte means a binary
    // file or a damaged one. Carriage returns end lines.
    if (is_control_character(text[at]) && text[at] != '\r') {
      reject_byte(file, line, column, text[at],
                  "a control character that text does not hold (is it a binary or damaged file?)");
    }
    if (text[at] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    at += length;
  }
}

bool is_control_character(char character) {
  const auto byte = static_cast<std::uint8_t>(character);
  return (byte < 0x20 && character != '\t' && character != '\n') || byte == 0x7F;
}

}  // namespace tessera
