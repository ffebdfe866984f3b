#pragma once
// Input files are UTF-8 text: a byte sequence that is not would pass the readers and fail later,
// far from its cause (in the JSON writer of a result, say), so every reader checks it first.
#include <string>
#include <string_view>

namespace tessera {

// Throws InputError naming `file`, the line and column (in characters) of the first byte that
// does not belong to a well-formed UTF-8 sequence (overlong forms, surrogates and code points
// above U+10FFFF included) or that is a control character other than tab, line feed and carriage
// return (a NUL byte, say), and that byte's value.
void require_utf8(std::string_view text, const std::string& file);

// A C0 control character other than tab and line feed, or DEL: what no text holds. A file may
// still hold carriage returns (its line ends); a string read from it may not.
bool is_control_character(char character);

}  // namespace tessera
