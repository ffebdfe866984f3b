#pragma once
// RFC 4180 records as the results CSV holds them: fields separated by commas, optionally quoted
// with "" as an escaped quote; a quoted field may span lines.
#include <string>
#include <vector>

namespace tessera {

struct CsvRecord {
  int line = 0;  // where the record starts, 1-based
  std::vector<std::string> fields;
};

// Blank lines are skipped. Throws std::runtime_error naming `file` and the line of an
// unterminated quote.
std::vector<CsvRecord> parse_csv(const std::string& text, const std::string& file);

}  // namespace tessera
