#pragma once
// Names of the scenario enums as written in files: one table per enum serves both parsing and
// printing.
#include <string>
#include <utility>
#include <vector>

#include "tessera/core/common/yaml_reader.hpp"
#include "tessera/core/scenario/scenario.hpp"

namespace tessera {

template <typename Enum>
using EnumTable = std::vector<std::pair<std::string, Enum>>;

template <typename Enum>
const EnumTable<Enum>& enum_table();

template <typename Enum>
std::vector<std::string> enum_names() {
  std::vector<std::string> names;
  for (const auto& entry : enum_table<Enum>()) names.push_back(entry.first);
  return names;
}

template <typename Enum>
Enum parse_enum(const YamlValue& value) {
  const auto name = value.as_choice(enum_names<Enum>());
  for (const auto& [text, item] : enum_table<Enum>()) {
    if (text == name) return item;
  }
  value.fail("a known name");
}

template <typename Enum>
std::string enum_name(Enum item) {
  for (const auto& [text, candidate] : enum_table<Enum>()) {
    if (candidate == item) return text;
  }
  return "unknown";
}

}  // namespace tessera
