#include "tessera/core/common/provenance.hpp"

#include <array>
#include <stdexcept>
#include <utility>

namespace tessera {
namespace {

const std::array<std::pair<Provenance, const char*>, 7> kProvenanceNames{{
    {Provenance::measured, "measured"},
    {Provenance::simulated, "simulated"},
    {Provenance::profile, "profile"},
    {Provenance::roofline, "roofline"},
    {Provenance::mixed, "mixed"},
    {Provenance::estimated, "estimated"},
    {Provenance::none, "none"},
}};

}  // namespace

std::string to_string(Provenance provenance) {
  for (const auto& [value, name] : kProvenanceNames) {
    if (value == provenance) return name;
  }
  return "none";
}

Provenance provenance_from_string(const std::string& text) {
  for (const auto& [value, name] : kProvenanceNames) {
    if (text == name) return value;
  }
  throw std::invalid_argument("unknown provenance '" + text + "'");
}

}  // namespace tessera
