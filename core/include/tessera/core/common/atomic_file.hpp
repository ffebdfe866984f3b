#pragma once
// Writes whole files so that a reader sees the old content or the new, never a torn one: the text
// goes to a temporary file beside the target, is flushed to disk, then renamed over it.
#include <functional>
#include <string>
#include <string_view>

namespace tessera {

// Creates missing parent directories. Throws std::runtime_error naming the path on failure.
void write_file_atomically(const std::string& path, const std::string& content);

// The same for a text produced piece by piece, never held whole (a plan's documents are hundreds
// of megabytes): `produce` hands each piece, in order, to the sink it is given. An exception from
// `produce` leaves the target as it was and propagates.
using TextSink = std::function<void(std::string_view piece)>;
void write_file_atomically(const std::string& path,
                           const std::function<void(const TextSink&)>& produce);

}  // namespace tessera
