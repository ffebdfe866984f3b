// GPT-2 (Radford et al. 2019, "Language Models are Unsupervised Multitask Learners", Table 2), as
// OpenAI's code (github.com/openai/gpt-2, model.py) and Hugging Face's GPT2LMHeadModel define it:
// - token and learned position embeddings (n_ctx positions), 10% dropout after their sum;
// - pre-norm blocks: LayerNorm, causal multi-head self-attention (Q, K, V and output
//   projections with biases), 10% dropout, residual add; LayerNorm, a 4x MLP with the tanh GELU,
//   10% dropout, residual add;
// - a final LayerNorm and the language-model head tied to the token embedding (no bias), with a
//   softmax cross-entropy at every position.
// The dropout on the attention probabilities is inside the fused attention kernel and not a
// layer here. The position table has sequence_length rows: GPT-2's n_ctx is 1024, the default.
//
// Parameters at the defaults (GPT-2 small): 124,439,808, Hugging Face's count with the tied
// head; medium (24 layers, 1024 wide, 16 heads) 354,823,168, large (36, 1280, 20) 774,030,080,
// XL (48, 1600, 25) 1,557,611,200 (analysis/transformer_parameters.py builds the same
// configurations from torch.nn and checks each count).
#include "tessera/core/model/graph_builder.hpp"
#include "zoo_models.hpp"

namespace tessera::zoo {
namespace {

constexpr double kGpt2Dropout = 0.1;  // resid_pdrop and embd_pdrop

ModelGraph build_gpt2(const TransformerShape& s) {
  GraphBuilder b("gpt2");
  const auto dropout = [&](const std::string& name, const std::string& from) {
    return s.dropout ? b.dropout(name, from, kGpt2Dropout) : from;
  };
  auto x = b.input("tokens", 1, {s.steps});
  x = b.embedding("token_embedding", x, {.vocabulary = s.vocabulary, .dimension = s.hidden});
  x = b.position_embedding("position_embedding", x, s.steps);
  x = dropout("embedding_dropout", x);
  for (std::int64_t i = 1; i <= s.layers; ++i) {
    const auto id = "block" + std::to_string(i);
    auto a = b.layer_norm(id + "_attention_norm", x);
    a = b.self_attention(id + "_attention", a,
                         {.heads = s.heads, .causal = true, .fused = s.fused_attention});
    a = dropout(id + "_attention_dropout", a);
    x = b.add(id + "_attention_residual", {x, a});
    auto m = b.layer_norm(id + "_mlp_norm", x);
    m = b.projection(id + "_mlp_in", m, {.out_features = 4 * s.hidden});
    m = b.gelu(id + "_mlp_gelu", m, GeluApproximation::tanh);
    m = b.projection(id + "_mlp_out", m, {.out_features = s.hidden});
    m = dropout(id + "_mlp_dropout", m);
    x = b.add(id + "_mlp_residual", {x, m});
  }
  x = b.layer_norm("final_norm", x);
  const auto logits = b.projection(
      "head", x, {.out_features = s.vocabulary, .bias = false, .shared_with = "token_embedding"});
  b.softmax_cross_entropy("loss", logits);
  auto model = std::move(b).build();
  model.set_default_mini_batch(8);
  return model;
}

}  // namespace

ZooModel gpt2() {
  return {
      .name = "gpt2",
      .summary = "GPT-2 language model (small at the defaults; medium, large, XL by options)",
      .definition = "Radford et al. 2019, GPT-2 (openai/gpt-2 model.py, GPT2LMHeadModel)",
      .options = transformer_options(
          {.shape = {.layers = 12, .hidden = 768, .heads = 12, .steps = 1024, .vocabulary = 50257},
           .sizes = "small 12 x 768 with 12 heads, medium 24 x 1024 / 16, large 36 x 1280 / 20, "
                    "XL 48 x 1600 / 25",
           .vocabulary_help = "tokens (GPT-2's byte-pair encoding: 50,257)"}),
      .build = [](const ModelOptions& o) { return build_gpt2(transformer_shape(o)); }};
}

}  // namespace tessera::zoo
