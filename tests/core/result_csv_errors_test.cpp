// The result schema's CSV reader on bad input: each error names the file and line (also after a
// note spanning lines), and what was wrong: a field, the field count, the header, a quote.
#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "result_samples.hpp"
#include "tessera/core/result/result_schema.hpp"
#include "test_support.hpp"

namespace tessera {
namespace {

using test::contains;
using test::sample_point;

template <typename Call>
std::string runtime_error_of(Call call) {
  try {
    call();
  } catch (const std::runtime_error& error) {
    return error.what();
  }
  ADD_FAILURE() << "expected a std::runtime_error";
  return "";
}

// Replaces the `column`-th field of data line `row` (0-based) in a CSV without quoted fields.
std::string with_field(const std::string& csv, int row, int column, const std::string& value) {
  std::istringstream in(csv);
  std::string line, out;
  int index = -1;
  while (std::getline(in, line)) {
    if (index == row) {
      std::vector<std::string> fields;
      std::string field;
      std::istringstream cells(line);
      while (std::getline(cells, field, ',')) fields.push_back(field);
      if (line.ends_with(",")) fields.push_back("");
      fields.at(static_cast<std::size_t>(column)) = value;
      line.clear();
      for (std::size_t i = 0; i < fields.size(); ++i) line += (i ? "," : "") + fields[i];
    }
    out += line + "\n";
    ++index;
  }
  return out;
}

TEST(ResultsCsvErrors, MentionTheFileAndLine) {
  const auto csv = results_to_csv({sample_point(), sample_point(), sample_point()});

  auto message = runtime_error_of([&] { results_from_csv(with_field(csv, 1, 1, "x1"), "r.csv"); });
  EXPECT_TRUE(contains(message, "r.csv:3")) << message;
  EXPECT_TRUE(contains(message, "'x1'")) << message;

  message = runtime_error_of([&] { results_from_csv(with_field(csv, 2, 10, "fast"), "r.csv"); });
  EXPECT_TRUE(contains(message, "r.csv:4")) << message;
  EXPECT_TRUE(contains(message, "'fast'")) << message;

  message = runtime_error_of([&] { results_from_csv(with_field(csv, 0, 9, "great"), "r.csv"); });
  EXPECT_TRUE(contains(message, "r.csv:2")) << message;
  EXPECT_TRUE(contains(message, "great")) << message;

  message = runtime_error_of([&] { results_from_csv(with_field(csv, 0, 22, "guessed"), "r.csv"); });
  EXPECT_TRUE(contains(message, "r.csv:2")) << message;
  EXPECT_TRUE(contains(message, "guessed")) << message;

  message = runtime_error_of([&] { results_from_csv(with_field(csv, 1, 3, "1.5"), "r.csv"); });
  EXPECT_TRUE(contains(message, "r.csv:3")) << message;
}

// A quoted note with newlines must not shift the line numbers of later errors.
TEST(ResultsCsvErrors, LineCountsTheNewlinesInsideQuotedNotes) {
  auto first = sample_point();
  first.note = "one\ntwo\nthree";  // the first record spans lines 2 to 4
  const auto csv = results_to_csv({first, sample_point()});
  const auto message =
      runtime_error_of([&] { results_from_csv(with_field(csv, 3, 1, "x5"), "multi.csv"); });
  EXPECT_TRUE(contains(message, "multi.csv:5:")) << message;
}

TEST(ResultsCsvErrors, WrongFieldCount) {
  const auto csv = results_to_csv({sample_point(), sample_point()});
  const auto message = runtime_error_of([&] { results_from_csv(csv + "a,b,c\n", "short.csv"); });
  EXPECT_TRUE(contains(message, "short.csv:4")) << message;
  EXPECT_TRUE(contains(message, "expected 35 fields, got 3")) << message;
}

TEST(ResultsCsvErrors, WrongHeader) {
  auto message = runtime_error_of([&] { results_from_csv("a,b\n1,2\n", "other.csv"); });
  EXPECT_TRUE(contains(message, "other.csv:1")) << message;
  message = runtime_error_of([&] { results_from_csv("", "nothing.csv"); });
  EXPECT_TRUE(contains(message, "nothing.csv:1")) << message;
  // A column missing from the header.
  auto csv = results_to_csv({sample_point()});
  csv.erase(0, csv.find(',') + 1);
  message = runtime_error_of([&] { results_from_csv(csv, "shifted.csv"); });
  EXPECT_TRUE(contains(message, "shifted.csv:1")) << message;
}

TEST(ResultsCsvErrors, UnterminatedQuote) {
  const auto csv = results_to_csv({sample_point()}) + "\"open,1,2\n";
  const auto message = runtime_error_of([&] { results_from_csv(csv, "quote.csv"); });
  EXPECT_TRUE(contains(message, "quote.csv:")) << message;
  EXPECT_TRUE(contains(message, "unterminated quote")) << message;
}

}  // namespace
}  // namespace tessera
