#include "tessera/core/common/yaml_reader.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <yaml-cpp/depthguard.h>

#include "tessera/core/common/utf8_text.hpp"
#include "yaml_documents.hpp"

namespace tessera {
namespace {

// `text` with its control characters written as \xNN, so that an error message shows them
// rather than sends them to the terminal.
std::string shown_text(const std::string& text) {
  std::string shown;
  for (const char character : text) {
    if (!is_control_character(character)) {
      shown += character;
      continue;
    }
    char escaped[8];
    std::snprintf(escaped, sizeof escaped, "\\x%02X", static_cast<unsigned char>(character));
    shown += escaped;
  }
  return shown;
}

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two
// adjacent characters ("widht" is one edit from "width").
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::string child_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string with_suggestion(std::string text, const std::string& word,
                            const std::vector<std::string>& candidates) {
  auto suggestion = closest_match(word, candidates);
  if (!suggestion.empty()) text += " (did you mean '" + suggestion + "'?)";
  return text;
}

}  // namespace

std::string closest_match(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = SIZE_MAX;
  for (const auto& candidate : candidates) {
    const auto distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best_distance = distance;
      best = candidate;
    }
  }
  const std::size_t tolerance = std::max<std::size_t>(1, word.size() / 3);
  return best_distance <= tolerance ? best : std::string();
}

YamlValue::YamlValue(YAML::Node node, std::string key_path, std::shared_ptr<const std::string> file)
    : node_(std::move(node)), key_path_(std::move(key_path)), file_(std::move(file)) {}

YamlValue YamlValue::derived(YAML::Node node, std::string key_path) const {
  return YamlValue(std::move(node), std::move(key_path), file_);
}

SourceLocation YamlValue::location() const {
  const auto mark = node_.Mark();
  if (mark.is_null()) return {*file_, 0, 0};
  return {*file_, mark.line + 1, mark.column + 1};
}

std::string YamlValue::describe() const {
  switch (node_.Type()) {
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      return "nothing";
    case YAML::NodeType::Sequence: {
      // A short list of scalars as written ([0, 0]): its values are often what is wrong.
      std::string text = "the list [";
      for (std::size_t i = 0; i < node_.size(); ++i) {
        if (!node_[i].IsScalar()) return "a list";
        text += (i == 0 ? "" : ", ") + node_[i].Scalar();
        if (text.size() > 60) return "a list of " + std::to_string(node_.size()) + " items";
      }
      return text + "]";
    }
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Scalar: {
      std::string text = node_.Scalar();
      if (text.size() > 60) text = text.substr(0, 57) + "...";
      return "'" + shown_text(text) + "'";
    }
  }
  return "something else";
}

void YamlValue::fail(const std::string& expected) const {
  throw InputError(location(), key_path_, "expected " + expected + ", got " + describe());
}

void YamlValue::fail_problem(const std::string& problem) const {
  throw InputError(location(), key_path_, problem);
}

std::int64_t YamlValue::as_integer(std::int64_t minimum, std::int64_t maximum) const {
  std::string range;
  if (minimum == 1 && maximum == INT64_MAX) {
    range = "a positive integer";
  } else if (minimum == 0 && maximum == INT64_MAX) {
    range = "a non-negative integer";
  } else if (maximum == INT64_MAX) {
    range = "an integer >= " + std::to_string(minimum);
  } else {
    range = "an integer in [" + std::to_string(minimum) + ", " + std::to_string(maximum) + "]";
  }
  if (!is_scalar()) fail(range);
  const std::string& text = node_.Scalar();
  std::int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) fail(range);
  if (value < minimum || value > maximum) fail(range);
  return value;
}

double YamlValue::as_number(double minimum, double maximum) const {
  std::ostringstream expected;
  expected << "a number in [" << minimum << ", " << maximum << "]";
  if (!is_scalar()) fail(expected.str());
  const std::string& text = node_.Scalar();
  double value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || !std::isfinite(value)) {
    fail(expected.str());
  }
  if (value < minimum || value > maximum) fail(expected.str());
  return value;
}

bool YamlValue::as_bool() const {
  if (is_scalar() && node_.Scalar() == "true") return true;
  if (is_scalar() && node_.Scalar() == "false") return false;
  fail("true or false");
}

std::string YamlValue::as_string() const {
  if (!is_scalar() || node_.Scalar().empty()) fail("a non-empty string");
  // A YAML escape ("\x1b", "\0") can put bytes that no text holds in a string; printed by
  // describe or in a table they would drive the terminal.
  const std::string& text = node_.Scalar();
  if (std::any_of(text.begin(), text.end(), is_control_character)) {
    fail("text without control characters (line breaks and tabs are fine)");
  }
  return node_.Scalar();
}

std::string YamlValue::as_choice(const std::vector<std::string>& allowed) const {
  const std::string expected = "one of: " + join(allowed);
  if (!is_scalar()) fail(expected);
  const std::string& text = node_.Scalar();
  if (std::find(allowed.begin(), allowed.end(), text) != allowed.end()) return text;
  throw InputError(location(), key_path_,
                   with_suggestion("expected " + expected + ", got " + describe(), text, allowed));
}

double YamlValue::as_quantity(QuantityKind kind) const {
  if (!is_scalar()) fail(quantity_syntax(kind));
  auto value = parse_quantity(node_.Scalar(), kind);
  if (!value) fail(quantity_syntax(kind));
  return *value;
}

std::vector<YamlValue> YamlValue::as_sequence(std::size_t min_items, std::size_t max_items) const {
  std::string expected = "a list";
  if (min_items == max_items) {
    expected += " of " + std::to_string(min_items) + " items";
  } else if (max_items != SIZE_MAX) {
    expected += " of " + std::to_string(min_items) + " to " + std::to_string(max_items) + " items";
  } else if (min_items > 0) {
    expected += " of at least " + std::to_string(min_items) + " items";
  }
  if (!is_sequence()) fail(expected);
  if (node_.size() < min_items || node_.size() > max_items) {
    fail_problem("expected " + expected + ", got " + std::to_string(node_.size()));
  }
  std::vector<YamlValue> items;
  for (std::size_t i = 0; i < node_.size(); ++i) {
    items.push_back(derived(node_[i], key_path_ + "[" + std::to_string(i) + "]"));
  }
  return items;
}

std::vector<std::int64_t> YamlValue::as_integer_list(std::size_t min_items, std::size_t max_items,
                                                     std::int64_t minimum,
                                                     std::int64_t maximum) const {
  std::vector<std::int64_t> values;
  for (const auto& item : as_sequence(min_items, max_items)) {
    values.push_back(item.as_integer(minimum, maximum));
  }
  return values;
}

YamlMap::YamlMap(const YamlValue& value, std::vector<std::string> allowed)
    : value_(value), allowed_(std::move(allowed)) {
  if (!value_.is_map()) value_.fail("a mapping with keys " + join(allowed_));
  std::set<std::string> seen;
  for (const auto& entry : value_.node()) {
    const YamlValue key = value_.derived(entry.first, value_.key_path());
    if (!entry.first.IsScalar()) key.fail("a plain key");
    const std::string name = entry.first.Scalar();
    const std::string path = child_path(value_.key_path(), name);
    if (std::find(allowed_.begin(), allowed_.end(), name) == allowed_.end()) {
      throw InputError(
          key.location(), path,
          with_suggestion("unknown key; allowed here: " + join(allowed_), name, allowed_));
    }
    if (!seen.insert(name).second) {
      throw InputError(key.location(), path, "key appears more than once");
    }
  }
}

bool YamlMap::has(const std::string& key) const {
  for (const auto& entry : value_.node()) {
    if (entry.first.Scalar() == key) return true;
  }
  return false;
}

YamlValue YamlMap::child(const std::string& key) const {
  for (const auto& entry : value_.node()) {
    if (entry.first.Scalar() == key) {
      return value_.derived(entry.second, child_path(value_.key_path(), key));
    }
  }
  return value_.derived(YAML::Node(), child_path(value_.key_path(), key));
}

YamlValue YamlMap::required(const std::string& key, const std::string& expected) const {
  if (!has(key)) {
    throw InputError(value_.location(), child_path(value_.key_path(), key),
                     "missing required key (expected " + expected + ")");
  }
  return child(key);
}

std::optional<YamlValue> YamlMap::optional(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return child(key);
}

std::vector<std::string> YamlMap::keys() const {
  std::vector<std::string> names;
  for (const auto& entry : value_.node()) names.push_back(entry.first.Scalar());
  return names;
}

YamlValue parse_yaml_text(const std::string& text, const std::string& display_name) {
  auto file = std::make_shared<const std::string>(display_name);
  require_utf8(text, display_name);
  try {
    const std::vector<YamlDocumentStart> documents = yaml_document_starts(text, display_name);
    YAML::Node root = documents.empty() ? YAML::Node() : YAML::Load(text);
    if (!root.IsDefined() || root.IsNull()) {
      throw InputError({display_name, 1, 1}, "", "the file is empty; expected a YAML mapping");
    }
    // What follows a second '---' would be read by nothing: a file is one document.
    for (std::size_t d = 1; d < documents.size(); ++d) {
      if (!documents[d].holds_content) continue;
      throw InputError({display_name, documents[d].line + 1, documents[d].column + 1}, "",
                       "a second YAML document follows the first ('---'); expected one document "
                       "per file");
    }
    return YamlValue(root, "", file);
  } catch (const YAML::DeepRecursion& error) {
    // yaml-cpp names this "bad file", which says nothing of the cause.
    throw InputError({display_name, error.mark.line + 1, error.mark.column + 1}, "",
                     "cannot be read: brackets or blocks nested deeper than the YAML reader "
                     "follows (" +
                         std::to_string(error.depth()) +
                         " levels of its parser); expected a file nested a few levels deep");
  } catch (const YAML::Exception& error) {
    const auto& mark = error.mark;
    SourceLocation where{display_name, mark.is_null() ? 0 : mark.line + 1,
                         mark.is_null() ? 0 : mark.column + 1};
    throw InputError(where, "", "not valid YAML: " + error.msg);
  }
}

YamlValue load_yaml_file(const std::string& path) {
  // A directory opens as a stream that reads nothing: it would pass for an empty file.
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) {
    throw InputError({path, 0, 0}, "", "is a directory; expected a YAML file");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({path, 0, 0}, "", "cannot open the file (does it exist?)");
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) throw InputError({path, 0, 0}, "", "cannot read the file");
  return parse_yaml_text(contents.str(), path);
}

}  // namespace tessera
