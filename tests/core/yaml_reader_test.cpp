// Strict YAML reading: every error names file, line, column and key path.
#include <gtest/gtest.h>

#include "test_support.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/core/common/input_error.hpp"
#include "tessera/core/common/yaml_reader.hpp"

namespace tessera {
namespace {

using test::contains;
using test::input_error;

YamlValue parse(const std::string& text) {
  return parse_yaml_text(text, "test.yaml");
}

// ---------------------------------------------------------------------------------------------
// Syntax errors

TEST(ParseYamlText, SyntaxErrorNamesLineAndColumn) {
  const auto error = input_error([] { parse_yaml_text("a: 1\nb: c: d\n", "bad.yaml"); });
  EXPECT_EQ(error.where().file, "bad.yaml");
  EXPECT_EQ(error.where().line, 2);
  EXPECT_EQ(error.where().column, 5);
  EXPECT_TRUE(error.key().empty());
  EXPECT_TRUE(error.problem().starts_with("not valid YAML: ")) << error.problem();
  EXPECT_TRUE(std::string(error.what()).starts_with("bad.yaml:2:5: not valid YAML"))
      << error.what();
}

TEST(ParseYamlText, UnclosedFlowSequence) {
  const auto error = input_error([] { parse("name: x\nlist: [1, 2\nother: 3\n"); });
  EXPECT_EQ(error.where().file, "test.yaml");
  EXPECT_GE(error.where().line, 2);
  EXPECT_GT(error.where().column, 0);
}

TEST(ParseYamlText, BadIndentation) {
  const auto error = input_error([] { parse("a:\n  - 1\n - 2\n"); });
  EXPECT_EQ(error.where().line, 3);
  EXPECT_GT(error.where().column, 0);
}

TEST(ParseYamlText, EmptyTextIsAnError) {
  for (const std::string text : {"", "\n\n", "# only a comment\n", "~\n"}) {
    const auto error = input_error([&] { parse_yaml_text(text, "empty.yaml"); });
    EXPECT_EQ(error.where().file, "empty.yaml");
    EXPECT_EQ(error.where().line, 1);
    EXPECT_TRUE(contains(error.problem(), "empty")) << error.problem();
  }
}

// yaml-cpp 0.7 reads a ',' outside brackets as an empty document and then never reads on: its
// LoadAll did not return (found by cluster_file_fuzz).
TEST(ParseYamlText, ACommaOutsideBracketsIsAnErrorNotAHang) {
  const auto first = input_error([] { parse(", x\n"); });
  EXPECT_EQ(first.where().line, 1);
  EXPECT_EQ(first.where().column, 1);
  EXPECT_EQ(first.problem(), "not valid YAML: unexpected ','");
  const auto later = input_error([] { parse("# a comment\n, file is empty\n"); });
  EXPECT_EQ(later.where().line, 2);
  EXPECT_EQ(later.problem(), "not valid YAML: unexpected ','");
}

// yaml-cpp stops deep nesting with the message "bad file", which names no cause.
TEST(ParseYamlText, NestingTooDeepSaysSo) {
  const std::string deep = "name: x\nmodel: " + std::string(5000, '[') + std::string(5000, ']');
  const auto error = input_error([&] { parse(deep); });
  EXPECT_EQ(error.where().line, 2);
  EXPECT_TRUE(contains(error.problem(), "nested deeper")) << error.problem();
  EXPECT_FALSE(contains(error.problem(), "bad file")) << error.problem();
}

TEST(ParseYamlText, ANulByteIsAnErrorAtItsPlace) {
  const auto error = input_error([] { parse(std::string("name: x\0y\n", 10)); });
  EXPECT_EQ(error.where().line, 1);
  EXPECT_EQ(error.where().column, 8);
  EXPECT_TRUE(contains(error.problem(), "0x00")) << error.problem();
}

TEST(ParseYamlText, ASecondDocumentIsAnErrorAtItsStart) {
  const auto error = input_error([] { parse("a: 1\n---\n---\nb: 2\n"); });
  EXPECT_EQ(error.where().line, 3);
  EXPECT_TRUE(contains(error.problem(), "a second YAML document")) << error.problem();
  // Empty documents after the first are nothing read by nobody.
  EXPECT_EQ(YamlMap(parse("a: 1\n---\n...\n"), {"a"}).keys(), std::vector<std::string>{"a"});
}

TEST(ParseYamlText, ValuesCarryTheirLocation) {
  const auto root = parse("first: 1\nsecond:\n  inner: hello\n");
  const YamlMap map(root, {"first", "second"});
  const auto second = YamlMap(map.required("second", "a mapping"), {"inner"});
  const auto inner = second.required("inner", "a string");
  EXPECT_EQ(inner.key_path(), "second.inner");
  EXPECT_EQ(inner.location().file, "test.yaml");
  EXPECT_EQ(inner.location().line, 3);
  EXPECT_EQ(inner.location().column, 10);
  EXPECT_EQ(inner.as_string(), "hello");
}

TEST(LoadYamlFile, MissingFileNamesThePath) {
  const auto error = input_error([] { load_yaml_file("/nonexistent/tessera/none.yaml"); });
  EXPECT_EQ(error.where().file, "/nonexistent/tessera/none.yaml");
  EXPECT_TRUE(contains(error.what(), "/nonexistent/tessera/none.yaml")) << error.what();
}

// ---------------------------------------------------------------------------------------------
// YamlMap

TEST(YamlMap, UnknownKeySuggestsTheClosest) {
  const auto root = parse("model: cosmoflow\nmini_bach: 4\n");
  const auto error = input_error([&] { YamlMap(root, {"model", "mini_batch", "dtype"}); });
  EXPECT_EQ(error.key(), "mini_bach");
  EXPECT_EQ(error.where().line, 2);
  EXPECT_EQ(error.where().column, 1);
  EXPECT_TRUE(contains(error.problem(), "unknown key")) << error.problem();
  EXPECT_TRUE(contains(error.problem(), "model, mini_batch, dtype")) << error.problem();
  EXPECT_TRUE(contains(error.problem(), "did you mean 'mini_batch'?")) << error.problem();
}

TEST(YamlMap, UnknownKeyWithoutAPlausibleSuggestion) {
  const auto root = parse("model: x\nzzzzzzzz: 4\n");
  const auto error = input_error([&] { YamlMap(root, {"model", "mini_batch"}); });
  EXPECT_EQ(error.key(), "zzzzzzzz");
  EXPECT_FALSE(contains(error.problem(), "did you mean")) << error.problem();
}

TEST(YamlMap, NestedUnknownKeyHasTheFullPath) {
  const auto root = parse("parallelism:\n  spatial:\n    gird: [4, 1, 1]\n");
  const YamlMap top(root, {"parallelism"});
  const YamlMap parallelism(top.required("parallelism", "a mapping"), {"data", "spatial"});
  const auto error = input_error([&] {
    YamlMap(parallelism.required("spatial", "a mapping"), {"grid", "until"});
  });
  EXPECT_EQ(error.key(), "parallelism.spatial.gird");
  EXPECT_EQ(error.where().line, 3);
  EXPECT_EQ(error.where().column, 5);
  EXPECT_TRUE(contains(error.problem(), "did you mean 'grid'?")) << error.problem();
}

TEST(YamlMap, DuplicateKey) {
  const auto root = parse("data: 2\nmodel: x\ndata: 4\n");
  const auto error = input_error([&] { YamlMap(root, {"data", "model"}); });
  EXPECT_EQ(error.key(), "data");
  EXPECT_EQ(error.where().line, 3);
  EXPECT_TRUE(contains(error.problem(), "more than once")) << error.problem();
}

TEST(YamlMap, NotAMapping) {
  const auto root = parse("- 1\n- 2\n");
  const auto error = input_error([&] { YamlMap(root, {"a", "b"}); });
  EXPECT_TRUE(contains(error.problem(), "expected a mapping with keys a, b, got the list [1, 2]"))
      << error.problem();
  const auto scalar = parse("a: 5\n");
  const YamlMap map(scalar, {"a"});
  const auto nested = input_error([&] { YamlMap(map.required("a", "a mapping"), {"x"}); });
  EXPECT_EQ(nested.key(), "a");
  EXPECT_TRUE(contains(nested.problem(), "got '5'")) << nested.problem();
}

TEST(YamlMap, NonScalarKey) {
  const auto root = parse("? [a, b]\n: 1\n");
  const auto error = input_error([&] { YamlMap(root, {"a"}); });
  EXPECT_TRUE(contains(error.problem(), "expected a plain key")) << error.problem();
}

TEST(YamlMap, AccessorsAndKeyOrder) {
  const auto root = parse("zeta: 1\nalpha: two\nmid: [3]\n");
  const YamlMap map(root, {"alpha", "mid", "zeta", "absent"});
  EXPECT_EQ(map.keys(), (std::vector<std::string>{"zeta", "alpha", "mid"}));
  EXPECT_TRUE(map.has("alpha"));
  EXPECT_FALSE(map.has("absent"));
  EXPECT_FALSE(map.optional("absent").has_value());
  ASSERT_TRUE(map.optional("zeta").has_value());
  EXPECT_EQ(map.optional("zeta")->as_integer(), 1);
  EXPECT_EQ(map.required("alpha", "a string").as_string(), "two");
  EXPECT_EQ(map.required("alpha", "a string").key_path(), "alpha");
}

TEST(YamlMap, MissingRequiredKey) {
  const auto root = parse("outer:\n  present: 1\n");
  const YamlMap top(root, {"outer"});
  const YamlMap outer(top.required("outer", "a mapping"), {"present", "needed"});
  const auto error = input_error([&] { outer.required("needed", "a positive integer"); });
  EXPECT_EQ(error.key(), "outer.needed");
  EXPECT_EQ(error.where().line, 2);  // the mapping that lacks it
  EXPECT_TRUE(contains(error.problem(), "missing required key (expected a positive integer)"))
      << error.problem();
}

// ---------------------------------------------------------------------------------------------
// Scalars

YamlValue value_of(const std::string& scalar) {
  const auto root = parse("v: " + scalar + "\n");
  return YamlMap(root, {"v"}).required("v", "a value");
}

TEST(YamlValue, IntegerRangeMessages) {
  EXPECT_EQ(value_of("42").as_integer(), 42);
  EXPECT_EQ(value_of("-7").as_integer(), -7);
  EXPECT_EQ(value_of("8").as_integer(1, 8), 8);
  EXPECT_EQ(value_of("1").as_integer(1, 8), 1);

  auto error = input_error([] { value_of("0").as_integer(1); });
  EXPECT_EQ(error.key(), "v");
  EXPECT_EQ(error.where().line, 1);
  EXPECT_EQ(error.where().column, 4);
  EXPECT_EQ(error.problem(), "expected a positive integer, got '0'");

  error = input_error([] { value_of("-1").as_integer(0); });
  EXPECT_EQ(error.problem(), "expected a non-negative integer, got '-1'");

  error = input_error([] { value_of("3").as_integer(5); });
  EXPECT_EQ(error.problem(), "expected an integer >= 5, got '3'");

  error = input_error([] { value_of("9").as_integer(1, 8); });
  EXPECT_EQ(error.problem(), "expected an integer in [1, 8], got '9'");

  error = input_error([] { value_of("0").as_integer(1, 8); });
  EXPECT_EQ(error.problem(), "expected an integer in [1, 8], got '0'");
}

// A YAML escape can put a terminal's control bytes in a string: refused, and shown escaped.
TEST(YamlValue, StringsHoldNoControlCharactersAndErrorsShowThemEscaped) {
  EXPECT_EQ(value_of("\"two\\nlines\\tand a tab\"").as_string(), "two\nlines\tand a tab");
  const auto escape = input_error([] { value_of("\"red \\x1b[31m\"").as_string(); });
  EXPECT_TRUE(contains(escape.problem(), "without control characters")) << escape.problem();
  EXPECT_TRUE(contains(escape.problem(), "got 'red \\x1B[31m'")) << escape.problem();
  EXPECT_FALSE(contains(escape.what(), "\x1b")) << escape.what();
  const auto nul = input_error([] { value_of("\"a\\0b\"").as_integer(); });
  EXPECT_TRUE(contains(nul.problem(), "got 'a\\x00b'")) << nul.problem();
}

TEST(YamlValue, IntegerRejectsNonIntegers) {
  for (const std::string text : {"1.5", "abc", "4 GPUs", "1e3", "99999999999999999999", "0x10"}) {
    const auto error = input_error([&] { value_of(text).as_integer(); });
    EXPECT_TRUE(contains(error.problem(), "expected an integer"))
        << text << ": " << error.problem();
    EXPECT_TRUE(contains(error.problem(), "got '" + text + "'")) << text << ": " << error.problem();
  }
  const auto list = input_error([] { value_of("[1, 2]").as_integer(1); });
  EXPECT_EQ(list.problem(), "expected a positive integer, got the list [1, 2]");
  // A long list or one of mappings is named as a list.
  const auto long_list = input_error([] {
    value_of("[" + std::string(40, '1') + ", " + std::string(40, '2') + "]").as_integer(1);
  });
  EXPECT_EQ(long_list.problem(), "expected a positive integer, got a list of 2 items");
  const auto of_maps = input_error([] { value_of("[{a: 1}]").as_integer(1); });
  EXPECT_EQ(of_maps.problem(), "expected a positive integer, got a list");
  const auto nothing = input_error([] { value_of("").as_integer(1); });
  EXPECT_EQ(nothing.problem(), "expected a positive integer, got nothing");
}

TEST(YamlValue, Numbers) {
  EXPECT_EQ(value_of("0.5").as_number(0, 1), 0.5);
  EXPECT_EQ(value_of("1e-3").as_number(0, 1), 1e-3);
  const auto error = input_error([] { value_of("1.5").as_number(0, 1); });
  EXPECT_EQ(error.problem(), "expected a number in [0, 1], got '1.5'");
  EXPECT_THROW(value_of("nan").as_number(0, 1), InputError);
  EXPECT_THROW(value_of("half").as_number(0, 1), InputError);
}

TEST(YamlValue, BoolsAndStrings) {
  EXPECT_TRUE(value_of("true").as_bool());
  EXPECT_FALSE(value_of("false").as_bool());
  const auto error = input_error([] { value_of("yes").as_bool(); });
  EXPECT_EQ(error.problem(), "expected true or false, got 'yes'");
  EXPECT_EQ(value_of("hello world").as_string(), "hello world");
  EXPECT_EQ(value_of("\"quoted: text\"").as_string(), "quoted: text");
  const auto empty = input_error([] { value_of("\"\"").as_string(); });
  EXPECT_TRUE(contains(empty.problem(), "expected a non-empty string")) << empty.problem();
}

TEST(YamlValue, ChoiceSuggestsTheClosest) {
  const std::vector<std::string> allowed{"none", "all", "conv", "dyn"};
  EXPECT_EQ(value_of("conv").as_choice(allowed), "conv");
  const auto error = input_error([] {
    value_of("comv").as_choice({"none", "all", "conv", "dyn"});
  });
  EXPECT_EQ(error.key(), "v");
  EXPECT_TRUE(contains(error.problem(), "expected one of: none, all, conv, dyn, got 'comv'"))
      << error.problem();
  EXPECT_TRUE(contains(error.problem(), "did you mean 'conv'?")) << error.problem();
  const auto far = input_error([] { value_of("sometimes").as_choice({"none", "all"}); });
  EXPECT_FALSE(contains(far.problem(), "did you mean")) << far.problem();
  EXPECT_THROW(value_of("Conv").as_choice(allowed), InputError);  // names are case-sensitive
}

TEST(YamlValue, Quantities) {
  EXPECT_EQ(value_of("16 GiB").as_quantity(QuantityKind::bytes), 17179869184.0);
  EXPECT_EQ(value_of("100 Gb/s").as_quantity(QuantityKind::bandwidth_bytes_per_second), 12.5e9);
  const auto error = input_error([] { value_of("64 MiBs").as_quantity(QuantityKind::bytes); });
  EXPECT_EQ(error.problem(),
            "expected " + quantity_syntax(QuantityKind::bytes) + ", got '64 MiBs'");
}

TEST(YamlValue, DescribeShortensLongScalars) {
  const std::string text(100, 'x');
  const auto described = value_of(text).describe();
  EXPECT_EQ(described, "'" + std::string(57, 'x') + "...'");
}

// ---------------------------------------------------------------------------------------------
// Sequences and nested key paths

TEST(YamlValue, SequenceItemsHaveIndexedKeyPaths) {
  const auto root = parse("a:\n  b:\n    - 1\n    - two\n    - 3\n");
  const YamlMap top(root, {"a"});
  const YamlMap a(top.required("a", "a mapping"), {"b"});
  const auto items = a.required("b", "a list").as_sequence();
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0].key_path(), "a.b[0]");
  EXPECT_EQ(items[1].key_path(), "a.b[1]");
  const auto error = input_error([&] { items[1].as_integer(1); });
  EXPECT_EQ(error.key(), "a.b[1]");
  EXPECT_EQ(error.where().line, 4);
  EXPECT_EQ(error.where().column, 7);
  EXPECT_TRUE(std::string(error.what()).starts_with("test.yaml:4:7: a.b[1]: expected a positive"))
      << error.what();
}

TEST(YamlValue, IntegerListReportsTheBadItem) {
  const auto root = parse("grid: [4, 0, 1]\n");
  const YamlMap map(root, {"grid"});
  const auto grid = map.required("grid", "a list");
  const auto error = input_error([&] { grid.as_integer_list(1, 3, 1, 1024); });
  EXPECT_EQ(error.key(), "grid[1]");
  EXPECT_EQ(error.where().line, 1);
  EXPECT_EQ(error.where().column, 11);
  EXPECT_EQ(error.problem(), "expected an integer in [1, 1024], got '0'");

  const auto ok = parse("grid: [4, 2, 1]\n");
  EXPECT_EQ(YamlMap(ok, {"grid"}).required("grid", "a list").as_integer_list(3, 3, 1, 1024),
            (std::vector<std::int64_t>{4, 2, 1}));
}

TEST(YamlValue, SequenceLengthMessages) {
  const auto root = parse("grid: [4, 2]\nscalar: 3\n");
  const YamlMap map(root, {"grid", "scalar"});
  const auto grid = map.required("grid", "a list");
  auto error = input_error([&] { grid.as_sequence(3, 3); });
  EXPECT_EQ(error.key(), "grid");
  EXPECT_EQ(error.problem(), "expected a list of 3 items, got 2");
  error = input_error([&] { grid.as_sequence(3, 5); });
  EXPECT_EQ(error.problem(), "expected a list of 3 to 5 items, got 2");
  error = input_error([&] { grid.as_sequence(3); });
  EXPECT_EQ(error.problem(), "expected a list of at least 3 items, got 2");
  error = input_error([&] { map.required("scalar", "a list").as_sequence(); });
  EXPECT_EQ(error.problem(), "expected a list, got '3'");
}

// ---------------------------------------------------------------------------------------------
// closest_match

TEST(ClosestMatch, PlausibleMisspellingsOnly) {
  const std::vector<std::string> keys{"model", "parallelism", "memory", "sweep"};
  EXPECT_EQ(closest_match("paralelism", keys), "parallelism");
  EXPECT_EQ(closest_match("mode", keys), "model");
  EXPECT_EQ(closest_match("swep", keys), "sweep");
  EXPECT_EQ(closest_match("memory", keys), "memory");
  EXPECT_EQ(closest_match("platform", keys), "");
  EXPECT_EQ(closest_match("x", {}), "");
}

}  // namespace
}  // namespace tessera
