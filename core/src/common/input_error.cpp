#include "tessera/core/common/input_error.hpp"

namespace tessera {

std::string format_input_error(const SourceLocation& where, const std::string& key,
                               const std::string& problem) {
  // A key that is an option ("--points") came from the command line, not from a file.
  const std::string source = key.starts_with("--") ? "command line" : "<input>";
  std::string text = where.file.empty() ? source : where.file;
  if (where.line > 0) {
    text += ":" + std::to_string(where.line);
    if (where.column > 0) text += ":" + std::to_string(where.column);
  }
  text += ": ";
  if (!key.empty()) text += key + ": ";
  return text + problem;
}

InputError::InputError(SourceLocation where, std::string key, std::string problem)
    : std::runtime_error(format_input_error(where, key, problem)),
      where_(std::move(where)),
      key_(std::move(key)),
      problem_(std::move(problem)) {}

}  // namespace tessera
