// BERT (Devlin et al. 2019, "BERT: Pre-training of Deep Bidirectional Transformers for Language
// Understanding"), large at the defaults, as Google's code (github.com/google-research/bert,
// modeling.py) and Hugging Face's BertForPreTraining define it, with the masked-language-model
// head and without the pooler and the next-sentence head:
// - word, token-type (2 segments) and learned position embeddings summed, LayerNorm, 10% dropout;
//   the input has two channels per step, the word and its segment;
// - post-norm blocks: bidirectional multi-head self-attention (with biases), 10% dropout,
//   residual add, LayerNorm; a 4x MLP with the exact (erf) GELU, 10% dropout, residual add,
//   LayerNorm;
// - the MLM head: a dense transform with GELU and LayerNorm, then the decoder tied to the word
//   embedding with a bias of its own, a softmax cross-entropy at every position (the reference
//   scores only the ~15% masked positions: this head costs more than BERT's).
//
// Parameters at the defaults (BERT-large, 24 layers, 1024 wide, 16 heads, 512 positions, a
// vocabulary of 30,522): 335,174,458 (analysis/transformer_parameters.py checks the count against
// the same configuration built from torch.nn). The paper's 340M counts the pooler and the
// next-sentence head too.
#include "tessera/core/model/graph_builder.hpp"
#include "zoo_models.hpp"

namespace tessera::zoo {
namespace {

constexpr double kBertDropout = 0.1;  // hidden_dropout_prob

ModelGraph build_bert(const TransformerShape& s) {
  GraphBuilder b("bert");
  const auto dropout = [&](const std::string& name, const std::string& from) {
    return s.dropout ? b.dropout(name, from, kBertDropout) : from;
  };
  const auto input = b.input("tokens", 2, {s.steps});  // the word and its segment at each step
  const auto words =
      b.embedding("word_embedding", input, {.vocabulary = s.vocabulary, .dimension = s.hidden});
  const auto segments = b.embedding("token_type_embedding", input,
                                    {.vocabulary = 2, .dimension = s.hidden, .channel = 1});
  auto x = b.add("embedding_sum", {words, segments});
  x = b.position_embedding("position_embedding", x, s.steps);
  x = b.layer_norm("embedding_norm", x);
  x = dropout("embedding_dropout", x);
  for (std::int64_t i = 1; i <= s.layers; ++i) {
    const auto id = "block" + std::to_string(i);
    auto a = b.self_attention(id + "_attention", x,
                              {.heads = s.heads, .causal = false, .fused = s.fused_attention});
    a = dropout(id + "_attention_dropout", a);
    x = b.layer_norm(id + "_attention_norm", b.add(id + "_attention_residual", {x, a}));
    auto m = b.projection(id + "_mlp_in", x, {.out_features = 4 * s.hidden});
    m = b.gelu(id + "_mlp_gelu", m);
    m = b.projection(id + "_mlp_out", m, {.out_features = s.hidden});
    m = dropout(id + "_mlp_dropout", m);
    x = b.layer_norm(id + "_mlp_norm", b.add(id + "_mlp_residual", {x, m}));
  }
  auto h = b.projection("mlm_transform", x, {.out_features = s.hidden});
  h = b.gelu("mlm_gelu", h);
  h = b.layer_norm("mlm_norm", h);
  const auto logits =
      b.projection("mlm_decoder", h,
                   {.out_features = s.vocabulary, .bias = true, .shared_with = "word_embedding"});
  b.softmax_cross_entropy("loss", logits);
  auto model = std::move(b).build();
  model.set_default_mini_batch(8);
  return model;
}

}  // namespace

ZooModel bert() {
  return {
      .name = "bert",
      .summary = "BERT encoder with its masked-language-model head (large at the defaults)",
      .definition = "Devlin et al. 2019, BERT-large (google-research/bert modeling.py)",
      .options = transformer_options(
          {.shape = {.layers = 24, .hidden = 1024, .heads = 16, .steps = 512, .vocabulary = 30522},
           .sizes = "base 12 x 768 with 12 heads, large 24 x 1024 / 16",
           .vocabulary_help = "word pieces (BERT's uncased vocabulary: 30,522)"}),
      .build = [](const ModelOptions& o) { return build_bert(transformer_shape(o)); }};
}

}  // namespace tessera::zoo
