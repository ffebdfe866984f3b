// The model zoo against published parameter counts (torchvision's for the image classifiers) and
// hand-derived shapes and FLOPs.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/core/model/layer_cost.hpp"
#include "tessera/core/model/model_graph.hpp"
#include "tessera/core/zoo/model_zoo.hpp"
#include "zoo_test_support.hpp"

namespace tessera {
namespace {

using Options = std::map<std::string, std::string>;

// Builds without validating the options, to reach the model's own shape checks.
ModelGraph build_unchecked(const std::string& model, const Options& given) {
  const ZooModel* entry = find_zoo_model(model);
  if (!entry) throw std::logic_error("no zoo model " + model);
  ModelOptions options;
  for (const auto& spec : entry->options) options.set(spec.name, spec.default_value);
  for (const auto& [name, value] : given) options.set(name, value);
  return entry->build(options);
}

// ---------------------------------------------------------------------------------------------
// Parameter counts

TEST(ModelZooParameters, AlexNetMatchesTorchvision) {
  EXPECT_EQ(test::zoo_params("alexnet"), 61'100'840);
}

TEST(ModelZooParameters, AlexNetClassesOnlyChangeTheLastLayer) {
  // fc8 4096*1000 + 1000 becomes 4096*10 + 10.
  EXPECT_EQ(test::zoo_params("alexnet", {{"classes", "10"}}), 61'100'840 - 4'097'000 + 40'970);
}

TEST(ModelZooParameters, Vgg16MatchesTorchvision) {
  EXPECT_EQ(test::zoo_params("vgg16"), 138'357'544);
}

TEST(ModelZooParameters, ResNet18MatchesTorchvision) {
  EXPECT_EQ(test::zoo_params("resnet18"), 11'689'512);
}

TEST(ModelZooParameters, ResNet50MatchesTorchvision) {
  EXPECT_EQ(test::zoo_params("resnet50"), 25'557'032);
}

TEST(ModelZooParameters, GoogLeNetMatchesTorchvision) {
  EXPECT_EQ(test::zoo_params("googlenet"), 6'624'904);
  EXPECT_EQ(test::zoo_params("googlenet", {{"aux_logits", "false"}}), 6'624'904);
  EXPECT_EQ(test::zoo_params("googlenet", {{"aux_logits", "true"}}), 13'004'888);
}

TEST(ModelZooParameters, InceptionV3MatchesTorchvision) {
  EXPECT_EQ(test::zoo_params("inception_v3"), 27'161'264);
  EXPECT_EQ(test::zoo_params("inception_v3", {{"aux_logits", "true"}}), 27'161'264);
  EXPECT_EQ(test::zoo_params("inception_v3", {{"aux_logits", "false"}}), 23'834'568);
}

TEST(ModelZooParameters, OverFeatFastMatchesHandCount) {
  EXPECT_EQ(test::zoo_params("overfeat"), 145'920'872);
}

TEST(ModelZooParameters, ClassifiersDoNotDependOnImageSizeAboveTheirPooledExtent) {
  // Adaptive/global pooling before the classifier keeps every weight shape.
  EXPECT_EQ(test::zoo_params("alexnet", {{"image_size", "448"}}), 61'100'840);
  EXPECT_EQ(test::zoo_params("vgg16", {{"image_size", "448"}}), 138'357'544);
  EXPECT_EQ(test::zoo_params("resnet50", {{"image_size", "512"}}), 25'557'032);
  EXPECT_EQ(test::zoo_params("googlenet", {{"image_size", "512"}, {"aux_logits", "true"}}),
            13'004'888);
  EXPECT_EQ(test::zoo_params("inception_v3", {{"image_size", "512"}}), 27'161'264);
}

TEST(ModelZooParameters, CosmoFlowIsWidthIndependent) {
  for (const char* width : {"128", "256", "512"}) {
    SCOPED_TRACE(width);
    EXPECT_EQ(test::zoo_params("cosmoflow", {{"width", width}}), 9'437'636);
    // Affine batch-norm adds 2 * (16 + 32 + 64 + 128 + 3 * 256) = 2,016.
    EXPECT_EQ(test::zoo_params("cosmoflow", {{"width", width}, {"batch_norm", "true"}}), 9'439'652);
  }
  EXPECT_EQ(test::zoo_params("cosmoflow", {{"variant", "mlperf"}}), 8'907'556);
}

TEST(ModelZooParameters, UNet3D) {
  EXPECT_EQ(test::zoo_params("unet3d"), 19'070'563);
}

// ---------------------------------------------------------------------------------------------
// Shapes

TEST(ModelZooShapes, AlexNet) {
  auto model = build_zoo_model("alexnet");
  EXPECT_EQ(model.layer("input").output_shape, test::sample_shape(3, {224, 224}));
  EXPECT_EQ(model.layer("conv1").output_shape, test::sample_shape(64, {55, 55}));
  EXPECT_EQ(model.layer("pool2").output_shape, test::sample_shape(192, {13, 13}));
  EXPECT_EQ(model.layer("fc6").input_shapes.at(0), test::sample_shape(256, {6, 6}));
  // At 224x224 the adaptive pool is the identity: kernel 1, stride 1.
  EXPECT_EQ(model.layer("avgpool").output_shape, test::sample_shape(256, {6, 6}));
  EXPECT_EQ(std::get<PoolingParams>(model.layer("avgpool").layer.params).kernel,
            (AxisValues{1, 1}));
  EXPECT_EQ(model.layer("fc8").output_shape, test::sample_shape(1000));
  EXPECT_EQ(model.output().layer.name, "loss");
  EXPECT_EQ(model.output().layer.kind, LayerKind::softmax_cross_entropy);
}

TEST(ModelZooShapes, AlexNetLargerImagesPoolTo6x6) {
  auto model = build_zoo_model("alexnet", {{"image_size", "448"}});
  const auto& pool = model.layer("avgpool");
  EXPECT_EQ(pool.input_shapes.at(0), test::sample_shape(256, {13, 13}));
  const auto& p = std::get<PoolingParams>(pool.layer.params);
  EXPECT_EQ(p.mode, PoolMode::average);
  EXPECT_EQ(p.kernel, (AxisValues{3, 3}));
  EXPECT_EQ(p.stride, (AxisValues{2, 2}));
  EXPECT_EQ(model.layer("fc6").input_shapes.at(0), test::sample_shape(256, {6, 6}));
}

TEST(ModelZooShapes, Vgg16) {
  auto model = build_zoo_model("vgg16");
  EXPECT_EQ(model.layer("conv1_1").output_shape, test::sample_shape(64, {224, 224}));
  EXPECT_EQ(model.layer("conv5_3").output_shape, test::sample_shape(512, {14, 14}));
  EXPECT_EQ(model.layer("fc6").input_shapes.at(0), test::sample_shape(512, {7, 7}));
  EXPECT_EQ(test::count_kind(model, LayerKind::convolution), 13);
  EXPECT_EQ(test::count_kind(model, LayerKind::fully_connected), 3);
  EXPECT_EQ(model.layer("fc8").output_shape, test::sample_shape(1000));

  auto large = build_zoo_model("vgg16", {{"image_size", "448"}});
  EXPECT_EQ(large.layer("avgpool").input_shapes.at(0), test::sample_shape(512, {14, 14}));
  EXPECT_EQ(large.layer("fc6").input_shapes.at(0), test::sample_shape(512, {7, 7}));
}

TEST(ModelZooShapes, OverFeat) {
  auto model = build_zoo_model("overfeat");
  EXPECT_EQ(model.layer("input").output_shape, test::sample_shape(3, {231, 231}));
  EXPECT_EQ(model.layer("conv1").output_shape, test::sample_shape(96, {56, 56}));
  EXPECT_EQ(model.layer("pool1").output_shape, test::sample_shape(96, {28, 28}));
  EXPECT_EQ(model.layer("conv2").output_shape, test::sample_shape(256, {24, 24}));
  EXPECT_EQ(model.layer("pool2").output_shape, test::sample_shape(256, {12, 12}));
  EXPECT_EQ(model.layer("conv5").output_shape, test::sample_shape(1024, {12, 12}));
  EXPECT_EQ(model.layer("fc6").input_shapes.at(0), test::sample_shape(1024, {6, 6}));
  EXPECT_EQ(model.layer("fc6").output_shape, test::sample_shape(3072));
  EXPECT_EQ(model.layer("fc7").output_shape, test::sample_shape(4096));
  EXPECT_EQ(model.layer("fc8").output_shape, test::sample_shape(1000));
}

TEST(ModelZooShapes, ResNet50) {
  auto model = build_zoo_model("resnet50");
  EXPECT_EQ(model.layer("conv1").output_shape, test::sample_shape(64, {112, 112}));
  EXPECT_EQ(model.layer("maxpool").output_shape, test::sample_shape(64, {56, 56}));
  EXPECT_EQ(model.layer("layer1_2_relu").output_shape, test::sample_shape(256, {56, 56}));
  // v1.5: the stride sits on the 3x3 convolution, not the first 1x1.
  EXPECT_EQ(model.layer("layer2_0_conv1").output_shape, test::sample_shape(128, {56, 56}));
  EXPECT_EQ(model.layer("layer2_0_conv2").output_shape, test::sample_shape(128, {28, 28}));
  EXPECT_EQ(model.layer("layer2_0_downsample").output_shape, test::sample_shape(512, {28, 28}));
  EXPECT_EQ(model.layer("layer3_5_relu").output_shape, test::sample_shape(1024, {14, 14}));
  EXPECT_EQ(model.layer("layer4_2_relu").output_shape, test::sample_shape(2048, {7, 7}));
  EXPECT_EQ(model.layer("fc").input_shapes.at(0), test::sample_shape(2048, {1, 1}));
  EXPECT_EQ(model.layer("fc").output_shape, test::sample_shape(1000));
  EXPECT_EQ(test::count_kind(model, LayerKind::add), 16);
  EXPECT_EQ(test::count_kind(model, LayerKind::convolution), 53);  // 49 + 4 downsamples
  // Only the first block of each stage has a downsample shortcut.
  EXPECT_TRUE(model.index_of("layer1_0_downsample").has_value());
  EXPECT_FALSE(model.index_of("layer1_1_downsample").has_value());
  const auto& add = model.layer("layer1_1_add");
  EXPECT_EQ(add.layer.inputs, (std::vector<std::string>{"layer1_1_conv3_bn", "layer1_0_relu"}));
}

TEST(ModelZooShapes, ResNet18) {
  auto model = build_zoo_model("resnet18");
  EXPECT_EQ(model.layer("layer1_1_relu").output_shape, test::sample_shape(64, {56, 56}));
  EXPECT_FALSE(model.index_of("layer1_0_downsample").has_value());
  EXPECT_EQ(model.layer("layer2_0_downsample").output_shape, test::sample_shape(128, {28, 28}));
  EXPECT_EQ(model.layer("layer4_1_relu").output_shape, test::sample_shape(512, {7, 7}));
  EXPECT_EQ(model.layer("fc").input_shapes.at(0), test::sample_shape(512, {1, 1}));
  EXPECT_EQ(test::count_kind(model, LayerKind::add), 8);
  EXPECT_EQ(test::count_kind(model, LayerKind::convolution), 20);  // 17 + 3 downsamples
}

TEST(ModelZooShapes, GoogLeNet) {
  auto model = build_zoo_model("googlenet");
  // ceil_mode: floor would give 55.
  EXPECT_EQ(model.layer("maxpool1").output_shape, test::sample_shape(64, {56, 56}));
  EXPECT_EQ(model.layer("maxpool2").output_shape, test::sample_shape(192, {28, 28}));
  EXPECT_EQ(model.layer("inception_3a").output_shape, test::sample_shape(256, {28, 28}));
  EXPECT_EQ(model.layer("inception_3b").output_shape, test::sample_shape(480, {28, 28}));
  EXPECT_EQ(model.layer("inception_4a").output_shape, test::sample_shape(512, {14, 14}));
  EXPECT_EQ(model.layer("inception_4e").output_shape, test::sample_shape(832, {14, 14}));
  EXPECT_EQ(model.layer("maxpool4").output_shape, test::sample_shape(832, {7, 7}));
  EXPECT_EQ(model.layer("inception_5b").output_shape, test::sample_shape(1024, {7, 7}));
  EXPECT_EQ(model.layer("fc").input_shapes.at(0), test::sample_shape(1024, {1, 1}));
  // The "5x5" branch really has a 3x3 kernel in torchvision.
  const auto& branch3 =
      std::get<ConvolutionParams>(model.layer("inception_3a_branch3").layer.params);
  EXPECT_EQ(branch3.kernel, (AxisValues{3, 3}));
  EXPECT_EQ(test::count_kind(model, LayerKind::softmax_cross_entropy), 1);
  EXPECT_FALSE(model.index_of("aux1_fc1").has_value());
}

TEST(ModelZooShapes, GoogLeNetAuxiliaryClassifiersAreLossBranches) {
  auto model = build_zoo_model("googlenet", {{"aux_logits", "true"}});
  EXPECT_EQ(test::count_kind(model, LayerKind::softmax_cross_entropy), 3);
  EXPECT_EQ(model.output().layer.name, "loss");
  for (const auto& [aux, channels] :
       std::vector<std::pair<std::string, std::int64_t>>{{"aux1", 512}, {"aux2", 528}}) {
    SCOPED_TRACE(aux);
    const auto& pool = model.layer(aux + "_pool");
    EXPECT_EQ(pool.output_shape, test::sample_shape(channels, {4, 4}));
    // The paper's 5x5/3 average pool at 224x224.
    EXPECT_EQ(std::get<PoolingParams>(pool.layer.params).kernel, (AxisValues{5, 5}));
    EXPECT_EQ(std::get<PoolingParams>(pool.layer.params).stride, (AxisValues{3, 3}));
    EXPECT_EQ(model.layer(aux + "_fc1").input_shapes.at(0), test::sample_shape(128, {4, 4}));
    EXPECT_EQ(model.layer(aux + "_fc2").output_shape, test::sample_shape(1000));
    EXPECT_EQ(model.layer(aux + "_loss").layer.inputs, (std::vector<std::string>{aux + "_fc2"}));
  }
  EXPECT_EQ(model.layer("aux1_pool").layer.inputs, (std::vector<std::string>{"inception_4a"}));
  EXPECT_EQ(model.layer("aux2_pool").layer.inputs, (std::vector<std::string>{"inception_4d"}));
}

TEST(ModelZooShapes, InceptionV3) {
  auto model = build_zoo_model("inception_v3");
  EXPECT_EQ(model.layer("input").output_shape, test::sample_shape(3, {299, 299}));
  EXPECT_EQ(model.layer("conv2d_1a_3x3").output_shape, test::sample_shape(32, {149, 149}));
  EXPECT_EQ(model.layer("maxpool2").output_shape, test::sample_shape(192, {35, 35}));
  EXPECT_EQ(model.layer("mixed_5b").output_shape, test::sample_shape(256, {35, 35}));
  EXPECT_EQ(model.layer("mixed_5d").output_shape, test::sample_shape(288, {35, 35}));
  EXPECT_EQ(model.layer("mixed_6a").output_shape, test::sample_shape(768, {17, 17}));
  EXPECT_EQ(model.layer("mixed_6e").output_shape, test::sample_shape(768, {17, 17}));
  EXPECT_EQ(model.layer("mixed_7a").output_shape, test::sample_shape(1280, {8, 8}));
  EXPECT_EQ(model.layer("mixed_7b").output_shape, test::sample_shape(2048, {8, 8}));
  EXPECT_EQ(model.layer("mixed_7c").output_shape, test::sample_shape(2048, {8, 8}));
  EXPECT_EQ(model.layer("fc").input_shapes.at(0), test::sample_shape(2048, {1, 1}));
  EXPECT_EQ(model.layer("fc").output_shape, test::sample_shape(1000));
  const auto& asymmetric =
      std::get<ConvolutionParams>(model.layer("mixed_6b_branch7x7_2").layer.params);
  EXPECT_EQ(asymmetric.kernel, (AxisValues{1, 7}));
  EXPECT_EQ(asymmetric.padding, (AxisValues{0, 3}));
  // Auxiliary classifier, on by default.
  EXPECT_EQ(test::count_kind(model, LayerKind::softmax_cross_entropy), 2);
  EXPECT_EQ(model.layer("aux_pool").output_shape, test::sample_shape(768, {5, 5}));
  EXPECT_EQ(model.layer("aux_conv1").output_shape, test::sample_shape(768, {1, 1}));
  EXPECT_EQ(model.layer("aux_fc").output_shape, test::sample_shape(1000));
  EXPECT_EQ(model.output().layer.name, "loss");

  auto without = build_zoo_model("inception_v3", {{"aux_logits", "false"}});
  EXPECT_EQ(test::count_kind(without, LayerKind::softmax_cross_entropy), 1);
  EXPECT_FALSE(without.index_of("aux_fc").has_value());
}

TEST(ModelZooShapes, MinimumImageSizes) {
  EXPECT_EQ(build_zoo_model("alexnet", {{"image_size", "223"}}).layer("fc6").input_shapes.at(0),
            test::sample_shape(256, {6, 6}));
  EXPECT_THROW(build_zoo_model("alexnet", {{"image_size", "222"}}), std::invalid_argument);
  EXPECT_THROW(build_unchecked("alexnet", {{"image_size", "222"}}), ModelError);
  EXPECT_NO_THROW(build_zoo_model("vgg16", {{"image_size", "224"}}));
  EXPECT_THROW(build_unchecked("vgg16", {{"image_size", "223"}}), ModelError);
  EXPECT_EQ(build_zoo_model("overfeat", {{"image_size", "71"}}).layer("fc6").input_shapes.at(0),
            test::sample_shape(1024, {1, 1}));
  EXPECT_THROW(build_unchecked("overfeat", {{"image_size", "70"}}), ModelError);
  EXPECT_EQ(build_zoo_model("inception_v3", {{"image_size", "75"}, {"aux_logits", "false"}})
                .layer("mixed_7c")
                .output_shape,
            test::sample_shape(2048, {1, 1}));
  EXPECT_THROW(build_unchecked("inception_v3", {{"image_size", "74"}, {"aux_logits", "false"}}),
               ModelError);
  // The auxiliary classifiers' smallest images, said before any layer fails.
  EXPECT_THROW(build_zoo_model("inception_v3", {{"image_size", "298"}}), std::invalid_argument);
  EXPECT_NO_THROW(build_zoo_model("inception_v3", {{"image_size", "299"}}));
  EXPECT_NO_THROW(build_zoo_model("googlenet", {{"image_size", "32"}}));
  EXPECT_THROW(build_zoo_model("googlenet", {{"image_size", "62"}, {"aux_logits", "true"}}),
               std::invalid_argument);
  EXPECT_NO_THROW(build_zoo_model("googlenet", {{"image_size", "63"}, {"aux_logits", "true"}}));
  EXPECT_NO_THROW(build_zoo_model("resnet50", {{"image_size", "32"}}));
}

TEST(ModelZooShapes, CosmoFlowPerWidth) {
  auto w128 = build_zoo_model("cosmoflow", {{"width", "128"}});
  EXPECT_EQ(w128.layer("input").output_shape, test::sample_shape(4, {128, 128, 128}));
  EXPECT_EQ(w128.layer("conv1").output_shape, test::sample_shape(16, {128, 128, 128}));
  EXPECT_EQ(w128.layer("pool1").output_shape, test::sample_shape(16, {64, 64, 64}));
  EXPECT_EQ(w128.layer("conv4").output_shape, test::sample_shape(128, {8, 8, 8}));
  EXPECT_EQ(w128.layer("conv7").output_shape, test::sample_shape(256, {2, 2, 2}));
  EXPECT_FALSE(w128.index_of("pool6").has_value());
  EXPECT_EQ(w128.layer("fc1").input_shapes.at(0), test::sample_shape(256, {2, 2, 2}));
  EXPECT_EQ(w128.output().layer.kind, LayerKind::mse_loss);

  auto w256 = build_zoo_model("cosmoflow", {{"width", "256"}});
  EXPECT_EQ(w256.layer("pool6").output_shape, test::sample_shape(256, {2, 2, 2}));
  EXPECT_FALSE(w256.index_of("pool7").has_value());

  auto w512 = build_zoo_model("cosmoflow", {{"width", "512"}});
  EXPECT_EQ(w512.layer("conv1").output_shape, test::sample_shape(16, {512, 512, 512}));
  EXPECT_EQ(w512.layer("pool7").output_shape, test::sample_shape(256, {2, 2, 2}));
  EXPECT_EQ(w512.layer("fc3").output_shape, test::sample_shape(4));
}

TEST(ModelZooShapes, UNet3D) {
  auto model = build_zoo_model("unet3d");
  EXPECT_EQ(model.layer("input").output_shape, test::sample_shape(1, {128, 128, 128}));
  EXPECT_EQ(model.layer("down4_conv2").output_shape, test::sample_shape(512, {16, 16, 16}));
  EXPECT_EQ(model.layer("classifier").output_shape, test::sample_shape(3, {128, 128, 128}));
  EXPECT_EQ(model.output().output_shape, test::sample_shape(3, {128, 128, 128}));
  EXPECT_EQ(model.output().layer.kind, LayerKind::softmax_cross_entropy);
}

TEST(ModelZooShapes, DeepBenchConvProblemZero) {
  const ZooModel* entry = find_zoo_model("deepbench_conv");
  ASSERT_NE(entry, nullptr);
  ASSERT_EQ(entry->options.size(), 1u);
  EXPECT_EQ(entry->options[0].minimum, 0);
  EXPECT_EQ(entry->options[0].maximum, 93);  // 94 problems

  auto model = build_zoo_model("deepbench_conv", {{"problem", "0"}});
  EXPECT_EQ(model.layer("input").output_shape, test::sample_shape(1, {161, 700}));
  const auto& conv = model.layer("conv");
  EXPECT_EQ(conv.output_shape, test::sample_shape(32, {79, 341}));
  const auto& p = std::get<ConvolutionParams>(conv.layer.params);
  EXPECT_EQ(p.kernel, (AxisValues{5, 20}));  // R along H, S along W
  EXPECT_EQ(p.stride, (AxisValues{2, 2}));
  EXPECT_EQ(p.padding, (AxisValues{0, 0}));
  EXPECT_EQ(model.default_mini_batch(), 4);
  EXPECT_NO_THROW(build_zoo_model("deepbench_conv", {{"problem", "93"}}));
  EXPECT_THROW(build_zoo_model("deepbench_conv", {{"problem", "94"}}), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// FLOPs

TEST(ModelZooFlops, ResNet50Conv1ByHand) {
  auto model = build_zoo_model("resnet50");
  const auto& conv1 = model.layer("conv1");
  // 112 * 112 outputs * 64 filters, each 3 * 7 * 7 multiply-adds; no bias.
  const double forward = 2.0 * 112 * 112 * 64 * 3 * 7 * 7;
  ASSERT_EQ(forward, 236'027'904.0);
  auto cost = layer_cost(conv1, 1, DType::float32);
  EXPECT_EQ(cost.flops.forward, forward);
  EXPECT_EQ(cost.flops.backward_data, forward);
  EXPECT_EQ(cost.flops.backward_filter, forward);
  EXPECT_EQ(cost.parameters, 64 * 3 * 7 * 7);
  EXPECT_EQ(cost.output_bytes, 64 * 112 * 112 * 4);
  EXPECT_EQ(layer_cost(conv1, 8, DType::float16).flops.forward, 8 * forward);
}

TEST(ModelZooFlops, BiasedConvAndFullyConnectedByHand) {
  auto model = build_zoo_model("alexnet");
  // conv1: 55 * 55 * 64 outputs, 3 * 11 * 11 multiply-adds each, plus one bias add per output.
  const double outputs = 55.0 * 55 * 64;
  auto conv1 = layer_cost(model.layer("conv1"), 1, DType::float32);
  EXPECT_EQ(conv1.flops.forward, 2 * outputs * 3 * 11 * 11 + outputs);
  EXPECT_EQ(conv1.flops.backward_data, 2 * outputs * 3 * 11 * 11);
  // fc6: 9216 inputs x 4096 outputs, plus bias.
  auto fc6 = layer_cost(model.layer("fc6"), 2, DType::float32);
  // Batch 2: two samples of 9216 * 4096 multiply-adds and 4096 bias adds.
  EXPECT_EQ(fc6.flops.forward, 2 * (2.0 * 9216 * 4096) + 2 * 4096);
  EXPECT_EQ(fc6.parameters, 9216 * 4096 + 4096);
}

// ---------------------------------------------------------------------------------------------
// The zoo as a whole and its options

TEST(ModelZoo, EveryModelBuildsWithDefaultOptions) {
  const std::vector<std::string> expected = {
      "cosmoflow", "unet3d",       "alexnet",        "overfeat", "vgg16",   "googlenet", "resnet18",
      "resnet50",  "inception_v3", "deepbench_conv", "gnmt",     "biglstm", "gpt2",      "bert"};
  std::vector<std::string> names;
  for (const auto& model : model_zoo()) names.push_back(model.name);
  EXPECT_EQ(names, expected);
  for (const auto& entry : model_zoo()) {
    SCOPED_TRACE(entry.name);
    EXPECT_FALSE(entry.summary.empty());
    EXPECT_FALSE(entry.definition.empty());
    for (const auto& spec : entry.options) {
      EXPECT_EQ(check_option_value(spec, spec.default_value), std::nullopt) << spec.name;
    }
    ModelGraph model = build_zoo_model(entry.name);
    EXPECT_EQ(model.name(), entry.name);
    EXPECT_GT(parameter_count(model), 0);
    const auto kind = model.output().layer.kind;
    EXPECT_TRUE(kind == LayerKind::softmax_cross_entropy || kind == LayerKind::mse_loss);
  }
}

TEST(ModelZoo, NamesAreUnique) {
  std::set<std::string> names;
  for (const auto& model : model_zoo()) {
    EXPECT_TRUE(names.insert(model.name).second) << model.name;
    EXPECT_EQ(find_zoo_model(model.name), &model);
  }
  EXPECT_EQ(find_zoo_model("resnet101"), nullptr);
}

TEST(ModelZoo, ImageClassifiersShareOptions) {
  for (const char* name :
       {"alexnet", "overfeat", "vgg16", "googlenet", "resnet18", "resnet50", "inception_v3"}) {
    SCOPED_TRACE(name);
    const ZooModel* entry = find_zoo_model(name);
    ASSERT_NE(entry, nullptr);
    std::set<std::string> options;
    for (const auto& spec : entry->options) options.insert(spec.name);
    EXPECT_TRUE(options.count("image_size"));
    EXPECT_TRUE(options.count("classes"));
    auto model = build_zoo_model(name, {{"classes", "17"}});
    EXPECT_EQ(model.output().output_shape, test::sample_shape(17));
    EXPECT_EQ(model.layers().front().output_shape.c, 3);
  }
}

TEST(ModelZoo, RejectsUnknownModelsAndBadOptions) {
  EXPECT_THROW(build_zoo_model("resnet101"), std::invalid_argument);
  EXPECT_THROW(build_zoo_model("resnet50", {{"depth", "50"}}), std::invalid_argument);
  EXPECT_THROW(build_zoo_model("resnet50", {{"image_size", "abc"}}), std::invalid_argument);
  EXPECT_THROW(build_zoo_model("resnet50", {{"image_size", "16"}}), std::invalid_argument);
  EXPECT_THROW(build_zoo_model("resnet50", {{"image_size", "224px"}}), std::invalid_argument);
  EXPECT_THROW(build_zoo_model("alexnet", {{"classes", "1"}}), std::invalid_argument);
  EXPECT_THROW(build_zoo_model("googlenet", {{"aux_logits", "yes"}}), std::invalid_argument);
  EXPECT_THROW(build_zoo_model("alexnet", {{"aux_logits", "true"}}), std::invalid_argument);
  EXPECT_THROW(build_zoo_model("cosmoflow", {{"width", "100"}}), std::invalid_argument);
  EXPECT_THROW(build_zoo_model("cosmoflow", {{"variant", "lbann2021"}}), std::invalid_argument);
  EXPECT_THROW(build_zoo_model("unet3d", {{"width", "4"}}), std::invalid_argument);
  EXPECT_THROW(build_zoo_model("unet3d", {{"width", "100"}}), ModelError);  // not a multiple of 8
  EXPECT_THROW(build_zoo_model("deepbench_conv", {{"problem", "-1"}}), std::invalid_argument);
  EXPECT_THROW(build_zoo_model("gnmt", {{"layers", "1"}}), std::invalid_argument);
  EXPECT_THROW(build_zoo_model("biglstm", {{"sequence_length", "0"}}), std::invalid_argument);
}

}  // namespace
}  // namespace tessera
