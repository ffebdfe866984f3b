#include "command_line_words.hpp"

#include <wordexp.h>

#include "tessera/core/common/input_error.hpp"

namespace tessera::app {

std::vector<std::string> command_line_words(const std::string& command_line,
                                            const std::string& option) {
  const auto bad = [&](const std::string& why) {
    return InputError({"command line", 0, 0}, option,
                      "expected a command line (a program and its arguments, e.g. \"mpirun "
                      "--bind-to none\"), got '" +
                          command_line + "': " + why);
  };
  wordexp_t expanded{};
  const int code = wordexp(command_line.c_str(), &expanded, WRDE_NOCMD);
  if (code != 0) {
    if (code == WRDE_NOSPACE) wordfree(&expanded);
    throw bad(code == WRDE_BADCHAR  ? "it holds a character the shell treats specially (| & ; < > "
                                      "( ) { } or a newline)"
              : code == WRDE_CMDSUB ? "command substitution is not taken"
                                    : "it cannot be split into words (an unclosed quote?)");
  }
  std::vector<std::string> words(expanded.we_wordv, expanded.we_wordv + expanded.we_wordc);
  wordfree(&expanded);
  if (words.empty()) throw bad("it names no program");
  return words;
}

}  // namespace tessera::app
