#include "tessera/core/common/atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace tessera {
namespace {

[[noreturn]] void fail(const std::string& what, const std::string& path) {
  throw std::runtime_error("cannot " + what + " " + path + ": " + std::strerror(errno));
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& content) {
  write_file_atomically(path, [&](const TextSink& write) { write(content); });
}

void write_file_atomically(const std::string& path,
                           const std::function<void(const TextSink&)>& produce) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code error;
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), error);
    if (error) {
      throw std::runtime_error("cannot write " + path + ": cannot create directory " +
                               target.parent_path().string() + ": " + error.message());
    }
  }
  // A unique name per call, so concurrent writers of one target never share a temporary file.
  std::string temporary = path + ".tmp.XXXXXX";
  const int fd = ::mkstemp(temporary.data());
  if (fd < 0) fail("create a temporary file for", path);
  ::fchmod(fd, 0644);
  const auto discard_temporary = [&] {
    ::close(fd);
    ::unlink(temporary.c_str());
  };
  // A failed write is remembered and the rest skipped, so that the producer runs to its end and
  // only its own exceptions pass through it.
  int write_error = 0;
  const auto write_all = [&](std::string_view text) {
    while (!text.empty() && write_error == 0) {
      const ssize_t n = ::write(fd, text.data(), text.size());
      if (n < 0) {
        if (errno != EINTR) write_error = errno;
        continue;
      }
      text.remove_prefix(static_cast<std::size_t>(n));
    }
  };
  // Small pieces are gathered into writes of a buffer's size.
  constexpr std::size_t kBufferBytes = 1 << 20;
  std::string buffer;
  try {
    produce([&](std::string_view piece) {
      if (buffer.size() + piece.size() > kBufferBytes) {
        write_all(buffer);
        buffer.clear();
      }
      if (piece.size() >= kBufferBytes) {
        write_all(piece);
      } else {
        buffer += piece;
      }
    });
  } catch (...) {
    discard_temporary();
    throw;
  }
  write_all(buffer);
  if (write_error != 0) {
    discard_temporary();
    errno = write_error;
    fail("write", temporary);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    ::unlink(temporary.c_str());
    fail("flush", temporary);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    ::unlink(temporary.c_str());
    fail("replace", path);
  }
}

}  // namespace tessera
