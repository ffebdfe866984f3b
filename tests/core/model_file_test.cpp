// Model files: a hand-counted small CNN (parameters, shapes, edges), a scenario that uses one, and
// bad files rejected at the layer and key that is wrong, directly and through a scenario.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "tessera/core/loading/scenario_loader.hpp"
#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/model/model_file.hpp"
#include "test_files.hpp"
#include "test_support.hpp"

namespace tessera {
namespace {

using test::contains;
using test::find_in_file;
using test::input_error;
using test::layer_index;

const std::string kModelTestDataDir = TESSERA_TEST_DATA_DIR;
const std::string kModelFileGoodDir = kModelTestDataDir + "/scenarios/good";
const std::string kModelFileModelDir = kModelTestDataDir + "/models";

TEST(ModelFile, SmallCnnHasHandCountedParametersAndShapes) {
  const auto model = load_model_file(kModelFileModelDir + "/small_cnn.yaml");
  EXPECT_EQ(model.name(), "small_cnn");
  EXPECT_FALSE(model.default_mini_batch().has_value());
  ASSERT_EQ(model.layers().size(), 14u);
  EXPECT_EQ(parameter_count(model), 4242);

  auto params = [&](const std::string& name) {
    return parameter_count(model.layers()[layer_index(model, name)]);
  };
  EXPECT_EQ(params("conv1"), 3 * 16 * 9 + 16);
  EXPECT_EQ(params("bn1"), 2 * 16);
  EXPECT_EQ(params("conv2"), 16 * 16 * 9);
  EXPECT_EQ(params("b1"), 16 * 8 + 8);
  EXPECT_EQ(params("b2"), 16 * 8 * 9);
  EXPECT_EQ(params("fc"), 16 * 10 + 10);
  EXPECT_EQ(params("add1"), 0);

  auto shape = [&](const std::string& name) {
    return model.layers()[layer_index(model, name)].output_shape;
  };
  EXPECT_EQ(shape("input"), (TensorShape{1, 3, {32, 32}}));
  EXPECT_EQ(shape("add1"), (TensorShape{1, 16, {32, 32}}));
  EXPECT_EQ(shape("cat"), (TensorShape{1, 16, {32, 32}}));
  EXPECT_EQ(shape("pool"), (TensorShape{1, 16, {16, 16}}));
  EXPECT_EQ(shape("gpool"), (TensorShape{1, 16, {1, 1}}));
  EXPECT_EQ(shape("fc"), (TensorShape{1, 10, {}}));

  // Edges: add1 joins relu1 and conv2; both branches read relu2.
  const auto& add1 = model.layers()[layer_index(model, "add1")];
  EXPECT_EQ(add1.input_indices,
            (std::vector<std::size_t>{layer_index(model, "relu1"), layer_index(model, "conv2")}));
  EXPECT_EQ(model.consumers_of(layer_index(model, "relu2")),
            (std::vector<std::size_t>{layer_index(model, "b1"), layer_index(model, "b2")}));
  EXPECT_EQ(model.output().layer.name, "loss");
}

TEST(ModelFile, ScenarioWithCustomModelLoads) {
  const auto loaded = load_scenario(kModelFileGoodDir + "/custom_model_small_cnn.yaml");
  EXPECT_EQ(loaded.model.name(), "small_cnn");
  EXPECT_EQ(parameter_count(loaded.model), 4242);
  EXPECT_EQ(loaded.scenario.model.dtype, DType::float16);
  EXPECT_EQ(loaded.scenario.model.optimizer, Optimizer::sgd);
  EXPECT_EQ(loaded.cluster.name, "v100_node");
  ASSERT_EQ(loaded.points.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(loaded.points[i].config.data, std::int64_t{1} << i);
    EXPECT_EQ(loaded.points[i].config.mini_batch, 32);
  }
}

struct BadModelCase {
  const char* file;
  const char* layer;    // the layer the error must point at
  const char* key;      // its key path in the model file
  const char* problem;  // part of the message
};

std::string bad_model_test_name(const testing::TestParamInfo<BadModelCase>& info) {
  return std::filesystem::path(info.param.file).stem().string();
}

class BadModelFile : public testing::TestWithParam<BadModelCase> {};

TEST_P(BadModelFile, IsRejectedAtTheLayer) {
  const auto& c = GetParam();
  const std::string path = kModelFileModelDir + "/" + c.file;
  const auto error = input_error([&] { (void)load_model_file(path); });
  EXPECT_EQ(error.where().file, path);
  EXPECT_EQ(error.where().line, find_in_file(path, std::string("name: ") + c.layer + ",").line)
      << error.what();
  EXPECT_EQ(error.key(), c.key) << error.what();
  EXPECT_TRUE(contains(error.problem(), c.problem)) << error.problem();

  // Through a scenario the message still names the model file and the layer.
  const auto via_scenario = input_error([&] {
    (void)load_scenario_text(
        std::string("name: uses-bad-model\nmodel:\n  file: ") + c.file + "\n  mini_batch: 1\n",
        "uses_bad_model.yaml", kModelFileModelDir);
  });
  EXPECT_TRUE(contains(via_scenario.what(), c.file)) << via_scenario.what();
  EXPECT_TRUE(contains(via_scenario.what(), c.problem)) << via_scenario.what();
}

INSTANTIATE_TEST_SUITE_P(
    Models, BadModelFile,
    testing::Values(BadModelCase{"cycle.yaml", "b", "layers[2]", "is part of a cycle"},
                    BadModelCase{"unknown_input.yaml", "relu1", "layers[2]",
                                 "input 'conv9' is not a layer of this model"},
                    BadModelCase{"concat_mismatch.yaml", "cat", "layers[3]",
                                 "concat inputs must share spatial extents"},
                    BadModelCase{"add_channel_mismatch.yaml", "add", "layers[3]",
                                 "add inputs must have identical shapes: 8x16x16 vs 16x16x16"},
                    BadModelCase{"unknown_op.yaml", "conv1", "layers[1].op", "got 'convolution'"},
                    // Sizes that would overflow 64-bit products further on are errors here.
                    BadModelCase{"bad/huge_fully_connected.yaml", "fc", "layers[2]",
                                 "more than 68,719,476,736 weights"},
                    BadModelCase{"bad/transposed_blow_up.yaml", "up1", "layers[1]",
                                 "(1024x16777216x16777216) has more than 68,719,476,736 elements "
                                 "per sample"}),
    bad_model_test_name);

}  // namespace
}  // namespace tessera
