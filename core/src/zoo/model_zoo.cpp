#include "tessera/core/zoo/model_zoo.hpp"

#include <charconv>
#include <stdexcept>

#include "zoo_models.hpp"

namespace tessera {
namespace {

std::optional<std::int64_t> parse_integer(const std::string& text) {
  std::int64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string join_names(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

}  // namespace

namespace zoo {

ModelOptionSpec image_size_option(std::int64_t default_size) {
  return {.name = "image_size",
          .type = OptionType::integer,
          .default_value = std::to_string(default_size),
          .minimum = 32,
          .maximum = 8192,
          .help = "input height and width in pixels"};
}

std::int64_t image_size_for_aux(const ModelOptions& options, std::int64_t smallest_with_aux,
                                const std::string& why) {
  const auto size = options.integer("image_size");
  if (options.boolean("aux_logits") && size < smallest_with_aux) {
    throw std::invalid_argument("image_size: at least " + std::to_string(smallest_with_aux) +
                                " with aux_logits (" + why + "), got " + std::to_string(size) +
                                "; or aux_logits: false");
  }
  return size;
}

ModelOptionSpec classes_option(std::int64_t default_classes) {
  return {.name = "classes",
          .type = OptionType::integer,
          .default_value = std::to_string(default_classes),
          .minimum = 2,
          .maximum = 1 << 20,
          .help = "number of output classes"};
}

ModelOptionSpec sequence_length_option(std::int64_t default_steps) {
  return {.name = "sequence_length",
          .type = OptionType::integer,
          .default_value = std::to_string(default_steps),
          .minimum = 1,
          .maximum = 1 << 20,
          .help = "tokens per sequence, also the position table's rows"};
}

ConvolutionParams conv_params(std::int64_t out_channels, std::int64_t kernel, std::int64_t stride,
                              std::int64_t padding, bool bias) {
  ConvolutionParams p;
  p.out_channels = out_channels;
  p.kernel = {kernel};
  p.stride = {stride};
  p.padding = {padding};
  p.bias = bias;
  return p;
}

}  // namespace zoo

std::int64_t ModelOptions::integer(const std::string& name) const {
  if (auto value = parse_integer(text(name))) return *value;
  throw std::invalid_argument("option " + name + " is not an integer");
}

bool ModelOptions::boolean(const std::string& name) const {
  return text(name) == "true";
}

const std::string& ModelOptions::text(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw std::invalid_argument("option " + name + " is not set");
  return it->second;
}

const std::vector<ZooModel>& model_zoo() {
  static const std::vector<ZooModel> models{
      zoo::cosmoflow(),      zoo::unet3d(),   zoo::alexnet(),
      zoo::overfeat(),       zoo::vgg16(),    zoo::googlenet(),
      zoo::resnet18(),       zoo::resnet50(), zoo::inception_v3(),
      zoo::deepbench_conv(), zoo::gnmt(),     zoo::biglstm(),
      zoo::gpt2(),           zoo::bert()};
  return models;
}

std::vector<std::string> zoo_model_names() {
  std::vector<std::string> names;
  for (const auto& model : model_zoo()) names.push_back(model.name);
  return names;
}

const ZooModel* find_zoo_model(const std::string& name) {
  for (const auto& model : model_zoo()) {
    if (model.name == name) return &model;
  }
  return nullptr;
}

std::optional<std::string> check_option_value(const ModelOptionSpec& spec,
                                              const std::string& value) {
  switch (spec.type) {
    case OptionType::boolean:
      if (value == "true" || value == "false") return std::nullopt;
      return "expected true or false";
    case OptionType::choice:
      for (const auto& allowed : spec.allowed) {
        if (value == allowed) return std::nullopt;
      }
      return "expected one of: " + join_names(spec.allowed);
    case OptionType::integer: {
      auto number = parse_integer(value);
      if (!spec.allowed.empty()) {
        for (const auto& allowed : spec.allowed) {
          if (number && std::to_string(*number) == allowed) return std::nullopt;
        }
        return "expected one of: " + join_names(spec.allowed);
      }
      if (!number || *number < spec.minimum || *number > spec.maximum) {
        return "expected an integer in [" + std::to_string(spec.minimum) + ", " +
               std::to_string(spec.maximum) + "]";
      }
      return std::nullopt;
    }
  }
  return "unsupported option type";
}

ModelGraph build_zoo_model(const std::string& name,
                           const std::map<std::string, std::string>& given) {
  const ZooModel* model = find_zoo_model(name);
  if (!model) throw std::invalid_argument("no model named '" + name + "' in the zoo");
  ModelOptions options;
  for (const auto& spec : model->options) options.set(spec.name, spec.default_value);
  for (const auto& [key, value] : given) {
    const ModelOptionSpec* spec = nullptr;
    for (const auto& candidate : model->options) {
      if (candidate.name == key) spec = &candidate;
    }
    if (!spec) throw std::invalid_argument("model " + name + " has no option '" + key + "'");
    if (auto problem = check_option_value(*spec, value)) {
      throw std::invalid_argument("option " + key + ": " + *problem + ", got '" + value + "'");
    }
    options.set(key, value);
  }
  return model->build(options);
}

}  // namespace tessera
