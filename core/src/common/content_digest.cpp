#include "tessera/core/common/content_digest.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace tessera {

std::string content_digest(std::string_view bytes) {
  const XXH128_hash_t hash = XXH3_128bits(bytes.data(), bytes.size());
  std::array<char, 33> text{};
  std::snprintf(text.data(), text.size(), "%016llx%016llx",
                static_cast<unsigned long long>(hash.high64),
                static_cast<unsigned long long>(hash.low64));
  return std::string(text.data(), 32);
}

std::string file_digest(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot be read to digest it");
  const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) throw std::runtime_error(path + ": cannot be read to digest it");
  return content_digest(bytes);
}

std::string directory_listing_digest(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_directory(path, error)) return content_digest("no directory " + path);
  std::vector<std::string> entries;
  for (const auto& entry : std::filesystem::directory_iterator(path, error)) {
    if (!entry.is_regular_file(error)) continue;
    const auto size = entry.file_size(error);
    const auto modified = entry.last_write_time(error).time_since_epoch().count();
    entries.push_back(entry.path().filename().string() + "\t" + std::to_string(size) + "\t" +
                      std::to_string(modified));
  }
  std::sort(entries.begin(), entries.end());
  std::string listing;
  for (const auto& entry : entries) listing += entry + "\n";
  return content_digest(listing);
}

}  // namespace tessera
