// The transformers of the zoo (gpt2, bert) against their published parameter counts (Hugging
// Face's, with the tied head; analysis/transformer_parameters.py checks the same figures against
// torch.nn), and the kinds they add: layer norm, self-attention, position embedding, a tied head.
#include <gtest/gtest.h>

#include "tessera/core/common/input_error.hpp"
#include "tessera/core/common/yaml_reader.hpp"
#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/model/model_file.hpp"
#include "tessera/core/zoo/model_zoo.hpp"
#include "zoo_test_support.hpp"

namespace tessera {
namespace {

TEST(TransformerZoo, Gpt2SizesHaveTheirPublishedParameters) {
  EXPECT_EQ(test::zoo_params("gpt2", {}), 124'439'808);
  EXPECT_EQ(test::zoo_params("gpt2", {{"layers", "24"}, {"hidden", "1024"}, {"heads", "16"}}),
            354'823'168);
  EXPECT_EQ(test::zoo_params("gpt2", {{"layers", "36"}, {"hidden", "1280"}, {"heads", "20"}}),
            774'030'080);
  EXPECT_EQ(test::zoo_params("gpt2", {{"layers", "48"}, {"hidden", "1600"}, {"heads", "25"}}),
            1'557'611'200);
  // Dropout and the attention kernel change the work, not the weights.
  EXPECT_EQ(test::zoo_params("gpt2", {{"dropout", "false"}, {"attention", "unfused"}}),
            124'439'808);
}

TEST(TransformerZoo, BertLargeWithItsMaskedLanguageModelHead) {
  // 335,141,888 of BertModel-large less its pooler (1024^2 + 1024), plus the MLM transform
  // (1024^2 + 1024), its LayerNorm (2,048) and the decoder's bias (30,522).
  EXPECT_EQ(test::zoo_params("bert", {}), 335'141'888 - 1'049'600 + 1'049'600 + 2'048 + 30'522);
}

TEST(TransformerZoo, HeadsMustDivideTheWidth) {
  EXPECT_THROW(build_zoo_model("gpt2", {{"hidden", "100"}, {"heads", "12"}}), ModelError);
}

ResolvedLayer layer_of(const std::string& yaml, const std::string& name) {
  return parse_model_file(parse_yaml_text(yaml, "m.yaml")).layer(name);
}

const std::string kSequence =
    "name: m\nlayers:\n"
    "  - {name: tokens, op: input, shape: [1, 16]}\n"
    "  - {name: words, op: embedding, vocabulary: 50, dimension: 8}\n";

TEST(TransformerKinds, SelfAttentionCostsByHand) {
  const auto attention =
      layer_of(kSequence + "  - {name: a, op: self_attention, heads: 2, fused: false}\n", "a");
  EXPECT_EQ(attention.output_shape, attention.input_shapes.at(0));
  const auto cost = layer_cost(attention, 3, DType::float32);
  const double n = 3, t = 16, c = 8, h = 2;
  EXPECT_EQ(cost.parameters, 4 * 8 * 8 + 4 * 8);
  EXPECT_DOUBLE_EQ(cost.flops.forward,
                   8 * n * t * c * c + 4 * n * t * t * c + 5 * n * h * t * t + 4 * n * t * c);
  EXPECT_DOUBLE_EQ(cost.flops.backward_data,
                   8 * n * t * c * c + 8 * n * t * t * c + 3 * n * h * t * t);
  EXPECT_DOUBLE_EQ(cost.flops.backward_filter, 8 * n * t * c * c + 4 * n * t * c);
  // Unfused keeps Q, K, V, the heads' output and the probabilities.
  EXPECT_EQ(cost.saved_for_backward_bytes, (4 * 3 * 16 * 8 + 3 * 2 * 16 * 16) * 4);
  const auto fused = layer_of(kSequence + "  - {name: a, op: self_attention, heads: 2}\n", "a");
  const auto fused_cost = layer_cost(fused, 3, DType::float32);
  EXPECT_EQ(fused_cost.saved_for_backward_bytes, (4 * 3 * 16 * 8 + 3 * 2 * 16) * 4);
  EXPECT_GT(fused_cost.flops.backward_data, cost.flops.backward_data);  // it recomputes scores
  // Unfused, the 3 x 2 x 16 x 16 scores pass through memory 4 times forward, 7 backward.
  EXPECT_DOUBLE_EQ(cost.intermediate_bytes.forward, 4.0 * 3 * 2 * 16 * 16 * 4);
  EXPECT_DOUBLE_EQ(cost.intermediate_bytes.backward_data, 7.0 * 3 * 2 * 16 * 16 * 4);
  EXPECT_EQ(cost.intermediate_bytes.backward_filter, 0);
  EXPECT_EQ(fused_cost.intermediate_bytes.total(), 0);
}

TEST(TransformerKinds, LayerNormAndPositionEmbedding) {
  const auto norm = layer_of(kSequence + "  - {name: n, op: layer_norm}\n", "n");
  const auto norm_cost = layer_cost(norm, 2, DType::float32);
  EXPECT_EQ(norm_cost.parameters, 16);
  EXPECT_TRUE(norm_cost.backward_needs.input);
  EXPECT_EQ(norm_cost.saved_for_backward_bytes, 2 * 2 * 16 * 4);  // mean and 1/std per position
  EXPECT_EQ(
      layer_of(kSequence + "  - {name: n, op: layer_norm, affine: false}\n", "n").output_shape.c,
      8);
  const auto positions =
      layer_of(kSequence + "  - {name: p, op: position_embedding, positions: 20}\n", "p");
  EXPECT_EQ(layer_cost(positions, 1, DType::float32).parameters, 20 * 8);
  try {
    layer_of(kSequence + "  - {name: p, op: position_embedding, positions: 10}\n", "p");
    FAIL() << "a sequence longer than the position table was accepted";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("more than the table's 10 positions"),
              std::string::npos)
        << error.what();
  }
}

TEST(TransformerKinds, ATiedHeadReadsItsEmbeddingsTable) {
  const std::string head = "  - {name: head, op: projection, out_features: 50, bias: false, ";
  const auto tied = layer_of(kSequence + head + "shared_with: words}\n", "head");
  const auto cost = layer_cost(tied, 2, DType::float32);
  EXPECT_EQ(cost.parameters, 0);
  EXPECT_EQ(cost.weight_bytes_read, 50 * 8 * 4);  // the owner's table, streamed all the same
  EXPECT_TRUE(computes_weight_gradients(tied.layer, cost.parameters));
  const auto refused = [&](const std::string& yaml, const std::string& words) {
    try {
      layer_of(yaml, "head");
      ADD_FAILURE() << "accepted: " << yaml;
    } catch (const InputError& error) {
      EXPECT_NE(std::string(error.what()).find(words), std::string::npos) << error.what();
    }
  };
  refused(kSequence + head + "shared_with: nowhere}\n", "is not a layer of this model");
  refused(kSequence + "  - {name: n, op: layer_norm}\n" + head + "shared_with: n}\n",
          "is not an embedding");
  refused(kSequence +
              "  - {name: head, op: projection, out_features: 49, bias: false, "
              "shared_with: words}\n",
          "has a 50 x 8 table, this one 49 x 8");
}

}  // namespace
}  // namespace tessera
