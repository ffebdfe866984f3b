#include "yaml_documents.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <optional>
#include <sstream>

#include "tessera/core/common/input_error.hpp"

namespace tessera {
namespace {

// Remembers where the current document starts and whether any of its nodes is not a null.
class DocumentProbe final : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override {
    start_ = mark;
    holds_content_ = false;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { holds_content_ = true; }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {
    holds_content_ = true;
  }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    holds_content_ = true;
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    holds_content_ = true;
  }
  void OnMapEnd() override {}

  const YAML::Mark& start() const { return start_; }
  bool holds_content() const { return holds_content_; }

 private:
  YAML::Mark start_ = YAML::Mark::null_mark();
  bool holds_content_ = false;
};

std::string stuck_message(const std::string& text, std::size_t position) {
  const char character = position < text.size() ? text[position] : '\0';
  if (character >= '!' && character <= '~') {
    return std::string("not valid YAML: unexpected '") + character + "'";
  }
  return "not valid YAML: cannot be read on from here";
}

}  // namespace

std::vector<YamlDocumentStart> yaml_document_starts(const std::string& text,
                                                    const std::string& display_name) {
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  DocumentProbe probe;
  std::vector<YamlDocumentStart> documents;
  std::optional<int> previous_position;
  while (parser.HandleNextDocument(probe)) {
    const YAML::Mark& start = probe.start();
    if (previous_position && start.pos <= *previous_position) {
      throw InputError({display_name, start.line + 1, start.column + 1}, "",
                       stuck_message(text, static_cast<std::size_t>(start.pos)));
    }
    previous_position = start.pos;
    documents.push_back({start.line, start.column, probe.holds_content()});
  }
  return documents;
}

}  // namespace tessera
