// GoogLeNet (Inception v1, Szegedy et al., 2015) as in torchvision (models/googlenet.py). Every
// convolution is torchvision's BasicConv2d: convolution without bias, batch-norm, ReLU. Stem:
// 64 7x7/2 pad 3, max-pool 3/2, 64 1x1, 192 3x3 pad 1, max-pool 3/2; inception 3a, 3b, max-pool
// 3/2, 4a..4e, max-pool 2/2, 5a, 5b (all max-pools with ceil_mode); global average pool, dropout
// 0.2, fc to the classes. 6,624,904 parameters at 1000 classes.
//
// An inception block concatenates four branches: 1x1; 1x1 reduce then 3x3 pad 1; 1x1 reduce then
// a second 3x3 pad 1 (torchvision's known quirk: the paper's 5x5 branch uses kernel_size=3);
// max-pool 3/1 pad 1 then 1x1 projection.
//
// aux_logits adds torchvision's two auxiliary classifiers after 4a and 4d, each a branch of the DAG
// with its own loss: AdaptiveAvgPool2d(4, 4), BasicConv2d 128 1x1, fc 1024, ReLU, dropout 0.7, fc
// to the classes, softmax cross-entropy (13,004,888 parameters in all). At 224x224 the adaptive
// pool (14x14 features to 4x4) is the paper's 5x5 stride-3 average pool.
#include <string>

#include "tessera/core/model/graph_builder.hpp"
#include "zoo_models.hpp"

namespace tessera::zoo {
namespace {

PoolingParams ceil_max_pool(std::int64_t kernel, std::int64_t stride, std::int64_t padding = 0) {
  return {.mode = PoolMode::max,
          .kernel = {kernel},
          .stride = {stride},
          .padding = {padding},
          .ceil_mode = true};
}

// Output channels of the four branches, with the two reductions: torchvision's Inception(in_ch,
// ch1x1, ch3x3red, ch3x3, ch5x5red, ch5x5, pool_proj) without in_ch.
struct InceptionChannels {
  std::int64_t ch1x1, ch3x3red, ch3x3, ch5x5red, ch5x5, pool_proj;
};

std::string inception(GraphBuilder& b, const std::string& name, const std::string& from,
                      const InceptionChannels& c) {
  const auto branch1 = b.conv_bn_relu(name + "_branch1", from, conv_params(c.ch1x1, 1));
  auto branch2 = b.conv_bn_relu(name + "_branch2_reduce", from, conv_params(c.ch3x3red, 1));
  branch2 = b.conv_bn_relu(name + "_branch2", branch2, conv_params(c.ch3x3, 3, 1, 1));
  auto branch3 = b.conv_bn_relu(name + "_branch3_reduce", from, conv_params(c.ch5x5red, 1));
  branch3 = b.conv_bn_relu(name + "_branch3", branch3, conv_params(c.ch5x5, 3, 1, 1));
  auto branch4 = b.pool(name + "_branch4_pool", from, ceil_max_pool(3, 1, 1));
  branch4 = b.conv_bn_relu(name + "_branch4", branch4, conv_params(c.pool_proj, 1));
  return b.concat(name, {branch1, branch2, branch3, branch4});
}

void auxiliary_classifier(GraphBuilder& b, const std::string& name, const std::string& from,
                          std::int64_t classes) {
  auto x =
      b.pool(name + "_pool", from, PoolingParams{.mode = PoolMode::average, .adaptive_output = 4});
  x = b.conv_bn_relu(name + "_conv", x, conv_params(128, 1));
  x = b.fully_connected(name + "_fc1", x, 1024);
  x = b.relu(name + "_fc1_relu", x);
  x = b.dropout(name + "_dropout", x, 0.7);
  x = b.fully_connected(name + "_fc2", x, classes);
  b.softmax_cross_entropy(name + "_loss", x);
}

ModelGraph build_googlenet(std::int64_t image_size, std::int64_t classes, bool aux_logits) {
  GraphBuilder b("googlenet");
  auto x = b.input("input", 3, {image_size, image_size});
  x = b.conv_bn_relu("conv1", x, conv_params(64, 7, 2, 3));
  x = b.pool("maxpool1", x, ceil_max_pool(3, 2));
  x = b.conv_bn_relu("conv2", x, conv_params(64, 1));
  x = b.conv_bn_relu("conv3", x, conv_params(192, 3, 1, 1));
  x = b.pool("maxpool2", x, ceil_max_pool(3, 2));
  x = inception(b, "inception_3a", x, {64, 96, 128, 16, 32, 32});
  x = inception(b, "inception_3b", x, {128, 128, 192, 32, 96, 64});
  x = b.pool("maxpool3", x, ceil_max_pool(3, 2));
  x = inception(b, "inception_4a", x, {192, 96, 208, 16, 48, 64});
  if (aux_logits) auxiliary_classifier(b, "aux1", x, classes);
  x = inception(b, "inception_4b", x, {160, 112, 224, 24, 64, 64});
  x = inception(b, "inception_4c", x, {128, 128, 256, 24, 64, 64});
  x = inception(b, "inception_4d", x, {112, 144, 288, 32, 64, 64});
  if (aux_logits) auxiliary_classifier(b, "aux2", x, classes);
  x = inception(b, "inception_4e", x, {256, 160, 320, 32, 128, 128});
  x = b.pool("maxpool4", x, ceil_max_pool(2, 2));
  x = inception(b, "inception_5a", x, {256, 160, 320, 32, 128, 128});
  x = inception(b, "inception_5b", x, {384, 192, 384, 48, 128, 128});
  x = b.pool("avgpool", x, PoolingParams{.mode = PoolMode::average, .global = true});
  x = b.dropout("dropout", x, 0.2);
  x = b.fully_connected("fc", x, classes);
  b.softmax_cross_entropy("loss", x);
  return std::move(b).build();
}

}  // namespace

constexpr std::int64_t kSmallestGoogLeNetImageWithAux = 63;

ZooModel googlenet() {
  return {
      .name = "googlenet",
      .summary = "GoogLeNet (Inception v1) image classifier with batch-norm",
      .definition = "torchvision googlenet (Szegedy et al. 2015, BasicConv2d with batch-norm)",
      .options = {image_size_option(224),
                  classes_option(),
                  {.name = "aux_logits",
                   .type = OptionType::boolean,
                   .default_value = "false",
                   .help = "add the two auxiliary classifiers (after 4a and 4d) and their losses "
                           "(needs image_size >= " +
                           std::to_string(kSmallestGoogLeNetImageWithAux) + ")"}},
      .build = [](const ModelOptions& o) {
        const auto size =
            image_size_for_aux(o, kSmallestGoogLeNetImageWithAux,
                               "the auxiliary classifiers pool 4a's and 4d's features to 4x4");
        return build_googlenet(size, o.integer("classes"), o.boolean("aux_logits"));
      }};
}

}  // namespace tessera::zoo
