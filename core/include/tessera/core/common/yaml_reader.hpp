#pragma once
// Strict reading of YAML input files. Every accessor either returns a value of the expected type
// or throws InputError naming file, line, column, the dotted key path, what was expected and what
// was found. yaml-cpp's own exceptions never escape.
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "tessera/core/common/input_error.hpp"
#include "tessera/core/common/quantity.hpp"

namespace tessera {

class YamlValue {
 public:
  YamlValue(YAML::Node node, std::string key_path, std::shared_ptr<const std::string> file);

  // A value from the same file, e.g. a child node.
  YamlValue derived(YAML::Node node, std::string key_path) const;

  const std::string& key_path() const { return key_path_; }
  SourceLocation location() const;
  const YAML::Node& node() const { return node_; }
  bool is_map() const { return node_.IsMap(); }
  bool is_sequence() const { return node_.IsSequence(); }
  bool is_scalar() const { return node_.IsScalar(); }

  std::int64_t as_integer(std::int64_t minimum = INT64_MIN, std::int64_t maximum = INT64_MAX) const;
  double as_number(double minimum, double maximum) const;
  bool as_bool() const;
  std::string as_string() const;  // any non-empty scalar
  // A name: one of `allowed`; the error lists them and suggests the closest.
  std::string as_choice(const std::vector<std::string>& allowed) const;
  double as_quantity(QuantityKind kind) const;

  std::vector<YamlValue> as_sequence(std::size_t min_items = 0,
                                     std::size_t max_items = SIZE_MAX) const;
  std::vector<std::int64_t> as_integer_list(std::size_t min_items, std::size_t max_items,
                                            std::int64_t minimum, std::int64_t maximum) const;

  // "got ..." text describing what is there, for error messages.
  std::string describe() const;
  [[noreturn]] void fail(const std::string& expected) const;         // "expected X, got Y"
  [[noreturn]] void fail_problem(const std::string& problem) const;  // free-form

 private:
  YAML::Node node_;
  std::string key_path_;
  std::shared_ptr<const std::string> file_;
};

// A YAML mapping whose keys must all come from a fixed list.
class YamlMap {
 public:
  // Checks that `value` is a mapping with string keys, no duplicates and no key outside `allowed`
  // (suggesting the closest allowed key when one is misspelt).
  YamlMap(const YamlValue& value, std::vector<std::string> allowed);

  const YamlValue& value() const { return value_; }
  bool has(const std::string& key) const;
  YamlValue required(const std::string& key, const std::string& expected) const;
  std::optional<YamlValue> optional(const std::string& key) const;
  std::vector<std::string> keys() const;  // in file order

 private:
  YamlValue child(const std::string& key) const;

  YamlValue value_;
  std::vector<std::string> allowed_;
};

// Parses a whole file (or text, for tests and the fuzzer, with `display_name` as its file name).
YamlValue load_yaml_file(const std::string& path);
YamlValue parse_yaml_text(const std::string& text, const std::string& display_name);

// The closest of `candidates` to `word` if it is a plausible misspelling, else empty.
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace tessera
