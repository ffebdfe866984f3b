#pragma once
// Reading the tests' data files: a file's text, its lines, and where a string first occurs in it
// (for checking that an error points at the right line).
#include <cstddef>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tessera::test {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::vector<std::string> lines_of(const std::string& path) {
  std::istringstream in(read_text(path));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// 1-based line and column of the first occurrence of `needle` outside comment lines.
struct TextPosition {
  int line = 0;
  int column = 0;
};

inline TextPosition find_in_file(const std::string& path, const std::string& needle) {
  const auto lines = lines_of(path);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("#", 0) == 0) continue;
    const auto column = lines[i].find(needle);
    if (column != std::string::npos) {
      return {static_cast<int>(i + 1), static_cast<int>(column + 1)};
    }
  }
  throw std::runtime_error("'" + needle + "' not found in " + path);
}

}  // namespace tessera::test
