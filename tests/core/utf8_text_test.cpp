#include "tessera/core/common/utf8_text.hpp"

#include <gtest/gtest.h>

#include <string>

#include "tessera/core/common/input_error.hpp"

namespace tessera {
namespace {

SourceLocation where_rejected(const std::string& text) {
  try {
    require_utf8(text, "f.yaml");
  } catch (const InputError& error) {
    return error.where();
  }
  ADD_FAILURE() << "accepted: " << text;
  return {};
}

TEST(Utf8Text, AcceptsAsciiAndEveryWellFormedLength) {
  EXPECT_NO_THROW(require_utf8("", "f"));
  EXPECT_NO_THROW(require_utf8("name: plain\n", "f"));
  // é (2 bytes), € (3), U+D7FF (the last before the surrogates), 😀 (4), U+10FFFF (the last)
  EXPECT_NO_THROW(
      require_utf8("caf\xC3\xA9 \xE2\x82\xAC \xED\x9F\xBF \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF", "f"));
}

TEST(Utf8Text, NamesTheLineAndCharacterColumnOfTheFirstBadByte) {
  const auto where = where_rejected("a: 1\nb: \xC3\xA9\xE9x\n");
  EXPECT_EQ(where.file, "f.yaml");
  EXPECT_EQ(where.line, 2);
  EXPECT_EQ(where.column, 5);  // "b: é" holds four characters
}

TEST(Utf8Text, RejectsMalformedSequences) {
  EXPECT_EQ(where_rejected("\x80").column, 1);              // a continuation byte alone
  EXPECT_EQ(where_rejected("x\xC3").column, 2);             // cut short at the end
  EXPECT_EQ(where_rejected("\xC3x").column, 1);             // lead byte without continuation
  EXPECT_EQ(where_rejected("\xC0\xAF").column, 1);          // overlong '/'
  EXPECT_EQ(where_rejected("\xE0\x80\xAF").column, 1);      // overlong, 3 bytes
  EXPECT_EQ(where_rejected("\xED\xA0\x80").column, 1);      // a surrogate (U+D800)
  EXPECT_EQ(where_rejected("\xF4\x90\x80\x80").column, 1);  // above U+10FFFF
  EXPECT_EQ(where_rejected("\xFF").column, 1);
}

TEST(Utf8Text, RejectsControlCharactersButNotTabsOrLineEnds) {
  EXPECT_NO_THROW(require_utf8("a:\t1\r\nb: 2\n", "f"));
  const std::string with_nul("name: x\0y\n", 10);
  EXPECT_EQ(where_rejected(with_nul).column, 8);
  EXPECT_EQ(where_rejected("a: 1\n\x1B[0m").line, 2);  // an escape sequence pasted in
  EXPECT_EQ(where_rejected("a\x7F").column, 2);        // DEL
}

TEST(Utf8Text, TheMessageShowsTheByte) {
  try {
    require_utf8("x\xE9", "f.csv");
    FAIL();
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("0xE9"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("f.csv:1:2"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace tessera
