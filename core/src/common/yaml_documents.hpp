#pragma once

#include <string>
#include <vector>

namespace tessera {

// Where a document of a YAML stream starts (0-based, as yaml-cpp counts) and whether it holds
// more than a null (an empty document between two '---' does not).
struct YamlDocumentStart {
  int line = 0;
  int column = 0;
  bool holds_content = false;
};

// The documents of `text`, read event by event. yaml-cpp 0.7's LoadAll never returns on some
// malformed text (a ',' outside brackets: jbeder/yaml-cpp#1040, fixed in 0.8), where its parser
// yields the same empty document again and again without reading on; here a document that starts
// where the one before it started ends the reading with an InputError at that place, naming
// `display_name`. yaml-cpp's own syntax errors are thrown as YAML::Exception.
std::vector<YamlDocumentStart> yaml_document_starts(const std::string& text,
                                                    const std::string& display_name);

}  // namespace tessera
