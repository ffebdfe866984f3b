#pragma once
// An option that names a program to start (validate-sim's --mpirun, say) takes a command line:
// "mpirun --bind-to none" is a program and its first arguments, split as a shell splits words.
#include <string>
#include <vector>

namespace tessera::app {

// The words of `command_line`, with the shell's quoting and variables ($HOME) but no command
// substitution; throws InputError naming `option` when the text is empty or cannot be split
// (an unclosed quote, a `|`, `;` or backquote).
std::vector<std::string> command_line_words(const std::string& command_line,
                                            const std::string& option);

}  // namespace tessera::app
