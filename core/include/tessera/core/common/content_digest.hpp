#pragma once
// Digests of what a result depends on: bytes, files and directory listings. They decide whether a
// stored result may be kept on resume, so they must change whenever the input does (XXH3 128-bit:
// fast, and collisions are not a practical concern for change detection; not a security hash).
#include <string>
#include <string_view>

namespace tessera {

// 32 lower-case hex digits.
std::string content_digest(std::string_view bytes);

// The digest of a file's bytes; throws std::runtime_error naming the file when it cannot be read.
std::string file_digest(const std::string& path);

// The digest of a directory's listing: every regular file's name, size and modification time,
// in name order (the contents of a large data set are not read). A missing directory digests as
// such, so that creating it later counts as a change.
std::string directory_listing_digest(const std::string& path);

}  // namespace tessera
