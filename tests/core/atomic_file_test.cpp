// Whole-file atomic writes: content, parent directories, replacement, no leftovers, errors.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/core/common/atomic_file.hpp"

namespace tessera {
namespace {

namespace fs = std::filesystem;

class AtomicFile : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() / ("tessera_atomic_file_test_" + std::to_string(::getpid()) +
                                        "_" + std::to_string(counter++));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ignored;
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ignored);
    fs::remove_all(dir_, ignored);
  }

  static std::string read(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
  }

  // Every regular file and directory under dir_, relative to it.
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& entry : fs::recursive_directory_iterator(dir_)) {
      names.push_back(fs::relative(entry.path(), dir_).generic_string());
    }
    std::sort(names.begin(), names.end());
    return names;
  }

  fs::path dir_;
};

TEST_F(AtomicFile, WritesTheContent) {
  const auto path = dir_ / "out.txt";
  write_file_atomically(path.string(), "hello\nworld\n");
  EXPECT_EQ(read(path), "hello\nworld\n");
  EXPECT_EQ(entries(), (std::vector<std::string>{"out.txt"}));
}

TEST_F(AtomicFile, WritesBinaryAndEmptyContent) {
  const std::string binary("a\0b\r\n\xff", 6);
  write_file_atomically((dir_ / "binary").string(), binary);
  EXPECT_EQ(read(dir_ / "binary"), binary);
  write_file_atomically((dir_ / "empty").string(), "");
  EXPECT_TRUE(fs::exists(dir_ / "empty"));
  EXPECT_EQ(fs::file_size(dir_ / "empty"), 0u);
}

TEST_F(AtomicFile, WritesLargeContent) {
  std::string large(8 * 1024 * 1024 + 17, 'x');
  for (std::size_t i = 0; i < large.size(); i += 4093) large[i] = static_cast<char>('a' + i % 26);
  write_file_atomically((dir_ / "large").string(), large);
  EXPECT_EQ(read(dir_ / "large"), large);
}

TEST_F(AtomicFile, PiecesWriteTheirConcatenation) {
  // Empty pieces, pieces that fill the 1 MiB buffer across its end, and one larger than it.
  std::vector<std::string> pieces{"", "head\n"};
  for (int i = 0; i < 3000; ++i)
    pieces.push_back(std::string(700 + i % 13, static_cast<char>('a' + i % 26)));
  pieces.push_back(std::string(3 * 1024 * 1024 + 5, 'L'));
  pieces.push_back("");
  pieces.push_back("tail\n");
  std::string whole;
  for (const auto& piece : pieces) whole += piece;
  const auto path = dir_ / "pieces";
  write_file_atomically(path.string(), [&](const TextSink& write) {
    for (const auto& piece : pieces) write(piece);
  });
  EXPECT_EQ(read(path), whole);
  EXPECT_EQ(entries(), (std::vector<std::string>{"pieces"}));
}

TEST_F(AtomicFile, AProducerThatThrowsLeavesTheOldFileAndNoTemporary) {
  const auto path = dir_ / "kept";
  write_file_atomically(path.string(), "old\n");
  try {
    write_file_atomically(path.string(), [](const TextSink& write) {
      // More than the buffer, so that part of it has reached the temporary file.
      for (int i = 0; i < 3; ++i) write(std::string(1024 * 1024, 'n'));
      throw std::invalid_argument("the producer stopped");
    });
    FAIL() << "expected the producer's exception";
  } catch (const std::invalid_argument& error) {
    EXPECT_STREQ(error.what(), "the producer stopped");
  }
  EXPECT_EQ(read(path), "old\n");
  EXPECT_EQ(entries(), (std::vector<std::string>{"kept"}));
}

TEST_F(AtomicFile, CreatesParentDirectories) {
  const auto path = dir_ / "a" / "b" / "c" / "out.csv";
  write_file_atomically(path.string(), "x,y\n");
  EXPECT_EQ(read(path), "x,y\n");
  EXPECT_TRUE(fs::is_directory(dir_ / "a" / "b" / "c"));
  EXPECT_EQ(entries(), (std::vector<std::string>{"a", "a/b", "a/b/c", "a/b/c/out.csv"}));
}

TEST_F(AtomicFile, ReplacesAnExistingFile) {
  const auto path = dir_ / "out.txt";
  { std::ofstream(path) << "an old and much longer content that must disappear entirely\n"; }
  write_file_atomically(path.string(), "new\n");
  EXPECT_EQ(read(path), "new\n");
  write_file_atomically(path.string(), "newer\n");
  EXPECT_EQ(read(path), "newer\n");
  EXPECT_EQ(entries(), (std::vector<std::string>{"out.txt"}));
}

TEST_F(AtomicFile, LeavesNoTemporaryFilesBehind) {
  for (int i = 0; i < 5; ++i) {
    write_file_atomically((dir_ / ("f" + std::to_string(i))).string(), std::to_string(i));
    write_file_atomically((dir_ / "same").string(), std::to_string(i));
  }
  EXPECT_EQ(entries(), (std::vector<std::string>{"f0", "f1", "f2", "f3", "f4", "same"}));
  EXPECT_EQ(read(dir_ / "same"), "4");
}

TEST_F(AtomicFile, ThrowsNamingTheDirectoryThatCannotBeCreated) {
  const auto blocker = dir_ / "blocker";
  { std::ofstream(blocker) << "a regular file\n"; }
  const auto path = blocker / "sub" / "out.txt";
  try {
    write_file_atomically(path.string(), "x");
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find((blocker / "sub").string()), std::string::npos) << message;
  }
  EXPECT_EQ(read(blocker), "a regular file\n");
  EXPECT_EQ(entries(), (std::vector<std::string>{"blocker"}));
}

TEST_F(AtomicFile, ThrowsNamingTheTargetWhenItIsADirectoryAndCleansUp) {
  const auto target = dir_ / "occupied";
  fs::create_directories(target / "inside");
  try {
    write_file_atomically(target.string(), "x");
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(target.string()), std::string::npos) << message;
  }
  EXPECT_TRUE(fs::is_directory(target / "inside"));
  EXPECT_EQ(entries(), (std::vector<std::string>{"occupied", "occupied/inside"}));
}

TEST_F(AtomicFile, ThrowsWhenTheDirectoryIsNotWritable) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions";
  const auto locked = dir_ / "locked";
  fs::create_directories(locked);
  fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
  const auto path = locked / "out.txt";
  try {
    write_file_atomically(path.string(), "x");
    ADD_FAILURE() << "expected std::runtime_error";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  }
  fs::permissions(locked, fs::perms::owner_all);
  EXPECT_FALSE(fs::exists(path));
  EXPECT_TRUE(fs::is_empty(locked));
}

}  // namespace
}  // namespace tessera
