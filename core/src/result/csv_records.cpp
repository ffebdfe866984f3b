#include "csv_records.hpp"

#include <stdexcept>

namespace tessera {

std::vector<CsvRecord> parse_csv(const std::string& text, const std::string& file) {
  std::vector<CsvRecord> records;
  int record_line = 1;
  std::vector<std::string> record;
  std::string field;
  bool in_quotes = false, field_started = false;
  int line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_quotes) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        in_quotes = false;
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"' && !field_started) {
      in_quotes = field_started = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
      field_started = false;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      record.push_back(std::move(field));
      const bool blank = record.size() == 1 && record.front().empty();
      if (!blank) records.push_back({record_line, std::move(record)});
      record.clear();
      field.clear();
      field_started = false;
      record_line = ++line;
    } else {
      field += c;
      field_started = true;
    }
  }
  if (in_quotes)
    throw std::runtime_error(file + ":" + std::to_string(line) + ": unterminated quote");
  if (field_started || !record.empty()) {
    record.push_back(std::move(field));
    records.push_back({record_line, std::move(record)});
  }
  return records;
}

}  // namespace tessera
