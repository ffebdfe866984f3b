// The options GPT-2 and BERT share, and the shape they give.
#include "zoo_models.hpp"

namespace tessera::zoo {

std::vector<ModelOptionSpec> transformer_options(const TransformerDefaults& d) {
  const auto integer = [](std::string name, std::int64_t value, std::int64_t minimum,
                          std::int64_t maximum, std::string help) {
    return ModelOptionSpec{.name = std::move(name),
                           .default_value = std::to_string(value),
                           .minimum = minimum,
                           .maximum = maximum,
                           .help = std::move(help)};
  };
  return {integer("layers", d.shape.layers, 1, 1024, "transformer blocks (" + d.sizes + ")"),
          integer("hidden", d.shape.hidden, 1, 1 << 17, "hidden width"),
          integer("heads", d.shape.heads, 1, 1024, "attention heads, dividing hidden"),
          sequence_length_option(d.shape.steps),
          integer("vocabulary", d.shape.vocabulary, 2, 1 << 22, d.vocabulary_help),
          {.name = "dropout",
           .type = OptionType::boolean,
           .default_value = "true",
           .help = "10% dropout after the embeddings and each block's two branches"},
          {.name = "attention",
           .type = OptionType::choice,
           .default_value = "fused",
           .allowed = {"fused", "unfused"},
           .help = "fused: one kernel keeping no T x T tensor (FlashAttention); unfused: the "
                   "attention probabilities kept for backward"}};
}

TransformerShape transformer_shape(const ModelOptions& o) {
  return {.layers = o.integer("layers"),
          .hidden = o.integer("hidden"),
          .heads = o.integer("heads"),
          .steps = o.integer("sequence_length"),
          .vocabulary = o.integer("vocabulary"),
          .dropout = o.boolean("dropout"),
          .fused_attention = o.text("attention") == "fused"};
}

}  // namespace tessera::zoo
