// GNMT as the MLPerf training reference defines it (rnn_translator/pytorch/seq2seq/models:
// gnmt.py, encoder.py, decoder.py, attention.py; "GNMT v2", Wu et al. 2016 with the attention of
// tensorflow/nmt), at any depth:
// - one embedding table shared by source and target (share_embedding = True);
// - encoder: a bidirectional LSTM, then one taking its 2H-wide output, then LSTMs with residual
//   connections from the 3rd layer; dropout before every layer after the first;
// - decoder: an LSTM whose output queries normalised Bahdanau attention over the encoder's output;
//   every later LSTM reads its predecessor's output (after dropout) concatenated with the
//   attention context, with residual connections from the 3rd layer; a classifier over the
//   vocabulary (a full softmax);
// - PyTorch LSTMs: two bias vectors per gate (b_ih, b_hh).
//
// At the reference's 4 layers, hidden 1024 and vocabulary 32,320 (its 32,317 BPE tokens padded to
// a multiple of 8) this gives 160,671,297 parameters, the count NVIDIA's apex tests quote for
// MLPerf GNMT with the tensor shapes of every parameter (tests/core/recurrent_zoo_test.cpp pins
// it). The default of 8 layers is the GNMT paper's depth with the same structure.
//
// A sample is a pair of token sequences of `sequence_length` steps each, the input's two channels
// (source, target); the decoder reads the target (teacher forcing), its loss is a softmax cross
// entropy at every target step. Label smoothing changes no shape and is not modelled.
#include "tessera/core/model/graph_builder.hpp"
#include "zoo_models.hpp"

namespace tessera::zoo {
namespace {

constexpr double kGnmtDropout = 0.2;  // MLPerf reference (gnmt.py dropout=0.2)

struct GnmtShape {
  std::int64_t layers = 8;
  std::int64_t hidden = 1024;
  std::int64_t vocabulary = 32320;
  std::int64_t steps = 50;
};

LstmParams unidirectional(std::int64_t hidden) {
  return {.hidden = hidden, .bias = LstmBias::double_};
}

std::string encoder(GraphBuilder& b, const std::string& tokens, const GnmtShape& s) {
  auto x = b.embedding("source_embedding", tokens,
                       {.vocabulary = s.vocabulary, .dimension = s.hidden, .channel = 0});
  LstmParams bidirectional = unidirectional(s.hidden);
  bidirectional.bidirectional = true;
  x = b.lstm("encoder1", x, bidirectional);
  x = b.lstm("encoder2", b.dropout("encoder2_dropout", x, kGnmtDropout), unidirectional(s.hidden));
  for (std::int64_t i = 3; i <= s.layers; ++i) {
    const auto id = "encoder" + std::to_string(i);
    const auto out =
        b.lstm(id, b.dropout(id + "_dropout", x, kGnmtDropout), unidirectional(s.hidden));
    x = b.add(id + "_residual", {out, x});
  }
  return x;
}

std::string decoder(GraphBuilder& b, const std::string& tokens, const std::string& memory,
                    const GnmtShape& s) {
  auto x = b.embedding("target_embedding", tokens,
                       {.vocabulary = s.vocabulary,
                        .dimension = s.hidden,
                        .channel = 1,
                        .shared_with = "source_embedding"});
  x = b.lstm("decoder1", x, unidirectional(s.hidden));
  const auto context = b.attention("attention", x, memory, {.units = s.hidden, .normalize = true});
  for (std::int64_t i = 2; i <= s.layers; ++i) {
    const auto id = "decoder" + std::to_string(i);
    const auto in = b.concat(id + "_input", {b.dropout(id + "_dropout", x, kGnmtDropout), context});
    const auto out = b.lstm(id, in, unidirectional(s.hidden));
    x = i >= 3 ? b.add(id + "_residual", {out, x}) : out;
  }
  return x;
}

ModelGraph build_gnmt(const GnmtShape& s) {
  GraphBuilder b("gnmt");
  const auto tokens = b.input("tokens", 2, {s.steps});  // source and target token ids
  const auto memory = encoder(b, tokens, s);
  const auto x = decoder(b, tokens, memory, s);
  const auto logits = b.projection("classifier", x, {.out_features = s.vocabulary, .bias = true});
  b.softmax_cross_entropy("loss", logits);
  auto model = std::move(b).build();
  model.set_default_mini_batch(128);  // per GPU: MLPerf reference run.sh --batch-size 128
  return model;
}

}  // namespace

ZooModel gnmt() {
  return {.name = "gnmt",
          .summary = "GNMT translation model: LSTM encoder/decoder with attention",
          .definition = "MLPerf training reference rnn_translator (GNMT v2, Wu et al. 2016)",
          .options = {{.name = "layers",
                       .default_value = "8",
                       .minimum = 2,
                       .maximum = 32,
                       .help = "LSTM layers of the encoder and of the decoder each (the GNMT "
                               "paper 8, MLPerf's reference 4)"},
                      {.name = "hidden",
                       .default_value = "1024",
                       .minimum = 8,
                       .maximum = 1 << 16,
                       .help = "LSTM units, embedding width and attention units"},
                      {.name = "vocabulary",
                       .default_value = "32320",
                       .minimum = 2,
                       .maximum = 1 << 22,
                       .help = "shared source/target tokens (MLPerf: 32,317 BPE tokens padded "
                               "to 32,320)"},
                      {.name = "sequence_length",
                       .default_value = "50",
                       .minimum = 1,
                       .maximum = 4096,
                       .help = "steps of the source and of the target sequence (MLPerf's "
                               "longest training sequence, max-length-train 50)"}},
          .build = [](const ModelOptions& o) {
            return build_gnmt({.layers = o.integer("layers"),
                               .hidden = o.integer("hidden"),
                               .vocabulary = o.integer("vocabulary"),
                               .steps = o.integer("sequence_length")});
          }};
}

}  // namespace tessera::zoo
