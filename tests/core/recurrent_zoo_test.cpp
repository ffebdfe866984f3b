// The recurrent models of the zoo (gnmt, biglstm) against their sources' published parameter
// counts, and their shapes and FLOPs by hand.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/model/model_graph.hpp"
#include "tessera/core/zoo/model_zoo.hpp"
#include "zoo_test_support.hpp"

namespace tessera {
namespace {

using Options = std::map<std::string, std::string>;

// MLPerf GNMT (4 layers, hidden 1024, shared 32,320-token embedding): 160,671,297 parameters as
// NVIDIA's apex distributed-optimizer tests state it ("MLPerf GNMT has 160671297 parameters",
// with the shape of each of its 44 tensors), the MLPerf reference's model definition built.
TEST(ModelZooParameters, GnmtMatchesMlperfReference) {
  EXPECT_EQ(test::zoo_params("gnmt", {{"layers", "4"}}), 160'671'297);
}

TEST(ModelZooParameters, GnmtPerLayerCountsFollowPyTorchLstms) {
  // Each extra depth adds one encoder LSTM (1024 -> 1024) and one decoder LSTM (2048 -> 1024),
  // both with PyTorch's two bias vectors: 8,396,800 + 12,591,104. The default (the GNMT paper's
  // 8 layers) has no published total; this is what the MLPerf structure gives at that depth.
  const std::int64_t per_depth = (4 * 1024 * 2048 + 8 * 1024) + (4 * 1024 * 3072 + 8 * 1024);
  EXPECT_EQ(per_depth, 8'396'800 + 12'591'104);
  EXPECT_EQ(
      test::zoo_params("gnmt", {{"layers", "5"}}) - test::zoo_params("gnmt", {{"layers", "4"}}),
      per_depth);
  EXPECT_EQ(test::zoo_params("gnmt"), 160'671'297 + 4 * per_depth);
  EXPECT_EQ(test::zoo_params("gnmt"), 244'622'913);
  // The sequence length changes no weight; the vocabulary the table and the classifier.
  EXPECT_EQ(test::zoo_params("gnmt", {{"sequence_length", "7"}}), 244'622'913);
  EXPECT_EQ(test::zoo_params("gnmt", {{"vocabulary", "32321"}}) - test::zoo_params("gnmt"),
            1024 + 1024 + 1);
}

// BIG LSTM, "2-Layer LSTM-8192-1024" of Jozefowicz et al. 2016, Table 1: 1.8B parameters,
// rounded. The authors' code (rafaljozefowicz/lm) gives the exact figure: embedding and softmax
// 793,470 x 1024 each, the softmax's bias, and per LSTM layer W [(1024 + 1024), 4 x 8192],
// one bias 4 x 8192 and the projection 8192 x 1024.
TEST(ModelZooParameters, BigLstmMatchesJozefowicz2016) {
  const std::int64_t vocabulary = 793'470;
  const std::int64_t lstm = 2048 * 4 * 8192 + 4 * 8192 + 8192 * 1024;
  const std::int64_t expected = 2 * vocabulary * 1024 + vocabulary + 2 * lstm;
  EXPECT_EQ(expected, 1'776'880'510);
  EXPECT_EQ(test::zoo_params("biglstm"), expected);
  EXPECT_NEAR(static_cast<double>(test::zoo_params("biglstm")), 1.8e9,
              0.05e9);  // the paper's rounding
  // Sampling the softmax changes the work, not the weights.
  EXPECT_EQ(test::zoo_params("biglstm", {{"sampled", "0"}}), expected);
  EXPECT_EQ(test::zoo_params("biglstm", {{"layers", "1"}}), expected - lstm);
}

TEST(ModelZooShapes, Gnmt) {
  auto model = build_zoo_model("gnmt", {{"layers", "4"}, {"sequence_length", "30"}});
  EXPECT_EQ(model.layer("tokens").output_shape,
            test::sample_shape(2, {30}));  // source and target ids
  EXPECT_EQ(model.layer("encoder1").output_shape, test::sample_shape(2048, {30}));  // bidirectional
  EXPECT_EQ(model.layer("encoder4_residual").output_shape, test::sample_shape(1024, {30}));
  EXPECT_EQ(
      model.layer("attention").input_shapes,
      (std::vector<TensorShape>{test::sample_shape(1024, {30}), test::sample_shape(1024, {30})}));
  EXPECT_EQ(model.layer("decoder2_input").output_shape, test::sample_shape(2048, {30}));
  EXPECT_EQ(model.layer("classifier").output_shape, test::sample_shape(32320, {30}));
  EXPECT_EQ(test::count_kind(model, LayerKind::lstm), 8);
  EXPECT_EQ(test::count_kind(model, LayerKind::attention), 1);
  EXPECT_FALSE(model.index_of("encoder2_residual").has_value());  // residuals from the 3rd layer
  EXPECT_TRUE(model.index_of("encoder3_residual").has_value());
  EXPECT_FALSE(model.index_of("decoder2_residual").has_value());
  EXPECT_TRUE(model.index_of("decoder3_residual").has_value());
  EXPECT_EQ(parameter_count(model.layer("target_embedding")), 0);  // shares the source's table
  EXPECT_EQ(model.default_mini_batch(), 128);
}

TEST(ModelZooShapes, BigLstm) {
  auto model = build_zoo_model("biglstm");
  EXPECT_EQ(model.layer("tokens").output_shape, test::sample_shape(1, {20}));
  EXPECT_EQ(model.layer("embedding").output_shape, test::sample_shape(1024, {20}));
  EXPECT_EQ(model.layer("lstm2").output_shape, test::sample_shape(1024, {20}));
  // The sampled softmax scores 8,192 sampled classes and the target at every step.
  EXPECT_EQ(model.layer("softmax").output_shape, test::sample_shape(8193, {20}));
  EXPECT_EQ(build_zoo_model("biglstm", {{"sampled", "0"}}).layer("softmax").output_shape,
            test::sample_shape(793470, {20}));
  EXPECT_EQ(model.default_mini_batch(), 128);
  // A vocabulary smaller than the samples is a model error naming the softmax.
  EXPECT_THROW(build_zoo_model("biglstm", {{"vocabulary", "100"}}), ModelError);
}

TEST(ModelZooFlops, BigLstmLayerByHand) {
  // One LSTM-8192-1024 layer, forward per token: 2 x 4 x 8192 x 2048 (gates) + 4 x 8192 (bias)
  // + 9 x 8192 (cell) + 2 x 8192 x 1024 (projection).
  auto model = build_zoo_model("biglstm");
  const double per_token = 2.0 * 4 * 8192 * 2048 + 4 * 8192 + 9 * 8192 + 2.0 * 8192 * 1024;
  EXPECT_EQ(layer_cost(model.layer("lstm1"), 1, DType::float32).flops.forward, 20 * per_token);
}

}  // namespace
}  // namespace tessera
