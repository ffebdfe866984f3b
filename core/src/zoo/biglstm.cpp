// BIG LSTM, the "2-Layer LSTM-8192-1024" language model of Jozefowicz et al. 2016 ("Exploring the
// limits of language modeling", Table 1: 1.8B parameters) on the One Billion Word benchmark
// (LM1B), as its authors' code defines it (github.com/rafaljozefowicz/lm, language_model.py and
// model_utils.py; NVIDIA's f-lm fork trains the same BIGLSTM):
// - a 1024-wide word embedding (emb_size = projected_size), 10% dropout before and after every
//   LSTM layer (keep_prob 0.9);
// - LSTM layers of 8192 cells projected to 1024 (TensorFlow LSTMCell with num_proj: one bias
//   vector per gate, no peepholes, no projection bias);
// - a softmax over the vocabulary with bias, trained as a sampled softmax of 8,192 classes
//   (num_sampled = 8192; TensorFlow's sampled_softmax_loss).
// Defaults: vocabulary 793,470 (the code's vocab_size; the paper quotes 793,471 words), 20
// unrolled steps and 128 sequences per GPU (the code's num_steps and batch_size).
//
// Parameters at the defaults: embedding 793,470 x 1024, 2 x (4 x 8192 x 2048 + 4 x 8192 +
// 8192 x 1024) for the LSTMs, softmax 793,470 x 1024 + 793,470: 1,776,880,510, which the paper
// rounds to 1.8B (tests/core/recurrent_zoo_test.cpp pins the exact figure). The code shards the
// embedding and softmax into 8 tables of ceil(V / 8) rows, 2 padding rows in all, not counted here.
#include "tessera/core/model/graph_builder.hpp"
#include "zoo_models.hpp"

namespace tessera::zoo {
namespace {

constexpr double kBiglstmDropout = 0.1;  // keep_prob 0.9

struct BigLstmShape {
  std::int64_t layers = 2;
  std::int64_t hidden = 8192;
  std::int64_t projection = 1024;
  std::int64_t vocabulary = 793470;
  std::int64_t steps = 20;
  std::int64_t sampled = 8192;
};

ModelGraph build_biglstm(const BigLstmShape& s) {
  GraphBuilder b("biglstm");
  auto x = b.input("tokens", 1, {s.steps});
  // The embedding is as wide as the LSTMs' projected output (the code's emb_size).
  x = b.embedding("embedding", x, {.vocabulary = s.vocabulary, .dimension = s.projection});
  x = b.dropout("embedding_dropout", x, kBiglstmDropout);
  for (std::int64_t i = 1; i <= s.layers; ++i) {
    const auto id = "lstm" + std::to_string(i);
    x = b.lstm(id, x, {.hidden = s.hidden, .projection = s.projection, .bias = LstmBias::single});
    x = b.dropout(id + "_dropout", x, kBiglstmDropout);
  }
  const auto logits = b.projection(
      "softmax", x, {.out_features = s.vocabulary, .bias = true, .sampled = s.sampled});
  b.softmax_cross_entropy("loss", logits);
  auto model = std::move(b).build();
  model.set_default_mini_batch(128);
  return model;
}

}  // namespace

ZooModel biglstm() {
  return {.name = "biglstm",
          .summary = "BIG LSTM language model (LSTM-8192-1024, LM1B)",
          .definition = "Jozefowicz et al. 2016, 2-layer LSTM-8192-1024 (rafaljozefowicz/lm)",
          .options = {{.name = "layers",
                       .default_value = "2",
                       .minimum = 1,
                       .maximum = 32,
                       .help = "LSTM layers"},
                      {.name = "hidden",
                       .default_value = "8192",
                       .minimum = 1,
                       .maximum = 1 << 16,
                       .help = "LSTM cells per layer"},
                      {.name = "projection",
                       .default_value = "1024",
                       .minimum = 1,
                       .maximum = 1 << 16,
                       .help = "LSTM output projection, also the embedding width"},
                      {.name = "vocabulary",
                       .default_value = "793470",
                       .minimum = 2,
                       .maximum = 1 << 22,
                       .help = "words (LM1B: 793,470 in the authors' code)"},
                      {.name = "sequence_length",
                       .default_value = "20",
                       .minimum = 1,
                       .maximum = 4096,
                       .help = "unrolled time steps per sequence"},
                      {.name = "sampled",
                       .default_value = "8192",
                       .minimum = 0,
                       .maximum = 1 << 22,
                       .help = "classes of the sampled softmax in training (0: full softmax)"}},
          .build = [](const ModelOptions& o) {
            return build_biglstm({.layers = o.integer("layers"),
                                  .hidden = o.integer("hidden"),
                                  .projection = o.integer("projection"),
                                  .vocabulary = o.integer("vocabulary"),
                                  .steps = o.integer("sequence_length"),
                                  .sampled = o.integer("sampled")});
          }};
}

}  // namespace tessera::zoo
