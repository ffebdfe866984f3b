#pragma once
// Writes whole files so that a reader sees the old content or the new, never a torn one: the text
// goes to a temporary file beside the target, is flushed to disk, then renamed over it.
#include <string>

namespace tessera {

// Creates missing parent directories. Throws std::runtime_error naming the path on failure.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace tessera
