#pragma once
// The one error type a user sees for bad input: it names the file, line, column, key and what was
// expected, so every front end (CLI, tests, fuzzer) reports problems the same way.
#include <stdexcept>
#include <string>

namespace tessera {

struct SourceLocation {
  std::string file;  // as the user named it
  int line = 0;      // 1-based; 0 when unknown
  int column = 0;    // 1-based; 0 when unknown
};

class InputError : public std::runtime_error {
 public:
  InputError(SourceLocation where, std::string key, std::string problem);

  const SourceLocation& where() const { return where_; }
  const std::string& key() const { return key_; }
  const std::string& problem() const { return problem_; }

 private:
  SourceLocation where_;
  std::string key_;
  std::string problem_;
};

// "file:line:column: key: problem", omitting the parts that are unknown; without a file,
// "command line" for an option's key ("--points") and "<input>" for others.
std::string format_input_error(const SourceLocation& where, const std::string& key,
                               const std::string& problem);

}  // namespace tessera
