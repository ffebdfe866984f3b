#pragma once
// The built-in models, selectable by name with options (e.g. cosmoflow with width 512). Each entry
// names the published definition it follows.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tessera/core/model/model_graph.hpp"

namespace tessera {

enum class OptionType { integer, boolean, choice };

struct ModelOptionSpec {
  std::string name;
  OptionType type = OptionType::integer;
  std::string default_value;
  std::vector<std::string> allowed;  // for choices, and for integers restricted to a set
  std::int64_t minimum = 1;          // for integers without an allowed set
  std::int64_t maximum = 1 << 20;
  std::string help;
};

// Option values after validation, defaults filled in.
class ModelOptions {
 public:
  void set(const std::string& name, std::string value) { values_[name] = std::move(value); }
  std::int64_t integer(const std::string& name) const;
  bool boolean(const std::string& name) const;
  const std::string& text(const std::string& name) const;
  const std::map<std::string, std::string>& values() const { return values_; }

 private:
  std::map<std::string, std::string> values_;
};

struct ZooModel {
  std::string name;
  std::string summary;
  std::string definition;  // the published definition followed
  std::vector<ModelOptionSpec> options;
  std::function<ModelGraph(const ModelOptions&)> build;
};

const std::vector<ZooModel>& model_zoo();
const ZooModel* find_zoo_model(const std::string& name);
// The zoo's model names, in model_zoo()'s order (for errors that list or suggest them).
std::vector<std::string> zoo_model_names();

// nullopt if `value` is acceptable for `spec`, else what was expected.
std::optional<std::string> check_option_value(const ModelOptionSpec& spec,
                                              const std::string& value);

// Validates `given` (unknown names, types, ranges), fills defaults and builds the model.
// Throws std::invalid_argument for bad options and ModelError for inconsistent ones.
ModelGraph build_zoo_model(const std::string& name,
                           const std::map<std::string, std::string>& given = {});

}  // namespace tessera
