// The registry of layer kinds: every LayerKind has rules, found by its value and its model-file
// name, and each kind's keys are accepted for it and refused for another.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <set>

#include "tessera/core/common/input_error.hpp"
#include "tessera/core/common/yaml_reader.hpp"
#include "tessera/core/cost/profile_database.hpp"
#include "tessera/core/model/layer_kind_rules.hpp"
#include "tessera/core/model/model_file.hpp"

namespace tessera {
namespace {

TEST(LayerKindRules, EveryKindIsRegisteredOnceInOrder) {
  const auto& kinds = layer_kinds();
  std::set<std::string> names;
  for (std::size_t i = 0; i < kinds.size(); ++i) {
    SCOPED_TRACE(kinds[i].model_file_name);
    EXPECT_EQ(static_cast<std::size_t>(kinds[i].kind), i);
    ASSERT_NE(kinds[i].rules, nullptr);
    EXPECT_EQ(&rules_of(kinds[i].kind), kinds[i].rules);
    EXPECT_TRUE(names.insert(kinds[i].model_file_name).second);
    EXPECT_EQ(layer_kind_from_name(kinds[i].model_file_name), kinds[i].kind);
    EXPECT_EQ(to_string(kinds[i].kind), kinds[i].model_file_name);
  }
  EXPECT_EQ(layer_kind_names().size(), kinds.size());
}

TEST(LayerKindRules, AKindsKeysAreItsOwn) {
  const auto model = [](const std::string& layer) {
    return parse_model_file(
        parse_yaml_text("name: m\nlayers:\n"
                        "  - {name: data, op: input, shape: [1, 8, 8]}\n"
                        "  - " +
                            layer + "\n",
                        "m.yaml"));
  };
  EXPECT_NO_THROW(model("{name: r, op: leaky_relu, negative_slope: 0.2}"));
  try {
    model("{name: r, op: relu, negative_slope: 0.2}");
    FAIL() << "relu took leaky_relu's key";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("negative_slope"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("unknown key"), std::string::npos) << error.what();
  }
}

TEST(LayerKindRules, OnlyMatrixProductsAreMatrixProducts) {
  EXPECT_TRUE(rules_of(LayerKind::convolution).is_matrix_product());
  EXPECT_TRUE(rules_of(LayerKind::lstm).is_matrix_product());
  EXPECT_FALSE(rules_of(LayerKind::relu).is_matrix_product());
  EXPECT_FALSE(rules_of(LayerKind::embedding).is_matrix_product());
  EXPECT_TRUE(rules_of(LayerKind::embedding).is_sequence());
  EXPECT_FALSE(rules_of(LayerKind::projection).depends_across_time());
}

// GELU, the kind added through the registry: parsed with its form, shaped like its input, its
// input kept for backward, 8 and 12 operations per element, and its form in the profile key.
TEST(LayerKindRules, GeluIsAnElementWiseKindWithItsForm) {
  const auto model =
      parse_model_file(parse_yaml_text("name: m\nlayers:\n"
                                       "  - {name: data, op: input, shape: [2, 4, 4]}\n"
                                       "  - {name: a, op: gelu}\n"
                                       "  - {name: b, op: gelu, approximate: tanh}\n",
                                       "m.yaml"));
  const auto& exact = model.layers().at(1);
  const auto& approximate = model.layers().at(2);
  EXPECT_EQ(std::get<GeluParams>(exact.layer.params).approximation, GeluApproximation::none);
  EXPECT_EQ(std::get<GeluParams>(approximate.layer.params).approximation, GeluApproximation::tanh);
  EXPECT_EQ(approximate.output_shape, exact.input_shapes.at(0));
  const auto cost = layer_cost(approximate, 3, DType::float32);
  EXPECT_EQ(cost.parameters, 0);
  EXPECT_TRUE(cost.backward_needs.input);
  EXPECT_FALSE(cost.backward_needs.output);
  EXPECT_DOUBLE_EQ(cost.flops.forward, 8.0 * 3 * 2 * 4 * 4);
  EXPECT_DOUBLE_EQ(cost.flops.backward_data, 12.0 * 3 * 2 * 4 * 4);
  EXPECT_EQ(cost.flops.backward_filter, 0.0);
  EXPECT_NE(
      kernel_shape_key(exact.layer, exact.input_shapes, exact.output_shape),
      kernel_shape_key(approximate.layer, approximate.input_shapes, approximate.output_shape));
  EXPECT_EQ(rules_of(LayerKind::gelu).params_json(approximate.layer)["approximate"], "tanh");
  try {
    parse_model_file(
        parse_yaml_text("name: m\nlayers:\n"
                        "  - {name: data, op: input, shape: [2, 4, 4]}\n"
                        "  - {name: a, op: gelu, approximate: sigmoid}\n",
                        "m.yaml"));
    FAIL() << "an unknown GELU form was accepted";
  } catch (const InputError& error) {
    EXPECT_NE(std::string(error.what()).find("approximate"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace tessera
