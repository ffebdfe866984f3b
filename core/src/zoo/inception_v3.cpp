// Inception v3 (Szegedy et al., 2016) as in torchvision (models/inception.py). Every convolution is
// torchvision's BasicConv2d: convolution without bias, batch-norm, ReLU. Stem: 32 3x3/2, 32 3x3,
// 64 3x3 pad 1, max-pool 3/2, 80 1x1, 192 3x3, max-pool 3/2; Mixed_5b..5d (InceptionA), Mixed_6a
// (InceptionB), Mixed_6b..6e (InceptionC, 1x7/7x1 factorised), Mixed_7a (InceptionD), Mixed_7b,
// 7c (InceptionE); global average pool, dropout 0.5, fc to the classes. Pooling branches inside
// blocks average-pool 3/1 pad 1; reduction blocks max-pool 3/2.
//
// aux_logits (on by default, as in torchvision) adds InceptionAux after Mixed_6e as a branch of
// the DAG with its own loss: average pool 5/3, BasicConv2d 128 1x1, BasicConv2d 768 5x5, global
// average pool, fc to the classes, softmax cross-entropy. Parameters at 1000 classes: 27,161,264
// with the auxiliary classifier, which holds 768*128 + 2*128 + 128*768*25 + 2*768 + 768*1000 +
// 1000 = 3,326,696 of them, so 23,834,568 without.
//
// The stem and the reductions shrink the image to 8x8 at 299x299; below 75x75 Mixed_7a has no
// output (torchvision's documented minimum), and the auxiliary 5x5 convolution needs Mixed_6e's
// 17x17, reached from 299x299 up.
#include <string>

#include "tessera/core/model/graph_builder.hpp"
#include "zoo_models.hpp"

namespace tessera::zoo {
namespace {

// BasicConv2d with a kh x kw kernel padded to keep the extent ("same" for odd kernels).
ConvolutionParams same(std::int64_t out_channels, std::int64_t kh, std::int64_t kw) {
  auto p = conv_params(out_channels, 1);
  p.kernel = {kh, kw};
  p.padding = {(kh - 1) / 2, (kw - 1) / 2};
  return p;
}

const PoolingParams kAveragePool3x3{
    .mode = PoolMode::average, .kernel = {3}, .stride = {1}, .padding = {1}};
const PoolingParams kMaxPool3x3s2{.mode = PoolMode::max, .kernel = {3}, .stride = {2}};

std::string inception_a(GraphBuilder& b, const std::string& name, const std::string& from,
                        std::int64_t pool_features) {
  const auto branch1x1 = b.conv_bn_relu(name + "_branch1x1", from, same(64, 1, 1));
  auto branch5x5 = b.conv_bn_relu(name + "_branch5x5_1", from, same(48, 1, 1));
  branch5x5 = b.conv_bn_relu(name + "_branch5x5_2", branch5x5, same(64, 5, 5));
  auto branch3x3dbl = b.conv_bn_relu(name + "_branch3x3dbl_1", from, same(64, 1, 1));
  branch3x3dbl = b.conv_bn_relu(name + "_branch3x3dbl_2", branch3x3dbl, same(96, 3, 3));
  branch3x3dbl = b.conv_bn_relu(name + "_branch3x3dbl_3", branch3x3dbl, same(96, 3, 3));
  auto branch_pool = b.pool(name + "_branch_pool_avg", from, kAveragePool3x3);
  branch_pool = b.conv_bn_relu(name + "_branch_pool", branch_pool, same(pool_features, 1, 1));
  return b.concat(name, {branch1x1, branch5x5, branch3x3dbl, branch_pool});
}

std::string inception_b(GraphBuilder& b, const std::string& name, const std::string& from) {
  const auto branch3x3 = b.conv_bn_relu(name + "_branch3x3", from, conv_params(384, 3, 2));
  auto branch3x3dbl = b.conv_bn_relu(name + "_branch3x3dbl_1", from, same(64, 1, 1));
  branch3x3dbl = b.conv_bn_relu(name + "_branch3x3dbl_2", branch3x3dbl, same(96, 3, 3));
  branch3x3dbl = b.conv_bn_relu(name + "_branch3x3dbl_3", branch3x3dbl, conv_params(96, 3, 2));
  const auto branch_pool = b.pool(name + "_branch_pool", from, kMaxPool3x3s2);
  return b.concat(name, {branch3x3, branch3x3dbl, branch_pool});
}

std::string inception_c(GraphBuilder& b, const std::string& name, const std::string& from,
                        std::int64_t c7) {
  const auto branch1x1 = b.conv_bn_relu(name + "_branch1x1", from, same(192, 1, 1));
  auto branch7x7 = b.conv_bn_relu(name + "_branch7x7_1", from, same(c7, 1, 1));
  branch7x7 = b.conv_bn_relu(name + "_branch7x7_2", branch7x7, same(c7, 1, 7));
  branch7x7 = b.conv_bn_relu(name + "_branch7x7_3", branch7x7, same(192, 7, 1));
  auto branch7x7dbl = b.conv_bn_relu(name + "_branch7x7dbl_1", from, same(c7, 1, 1));
  branch7x7dbl = b.conv_bn_relu(name + "_branch7x7dbl_2", branch7x7dbl, same(c7, 7, 1));
  branch7x7dbl = b.conv_bn_relu(name + "_branch7x7dbl_3", branch7x7dbl, same(c7, 1, 7));
  branch7x7dbl = b.conv_bn_relu(name + "_branch7x7dbl_4", branch7x7dbl, same(c7, 7, 1));
  branch7x7dbl = b.conv_bn_relu(name + "_branch7x7dbl_5", branch7x7dbl, same(192, 1, 7));
  auto branch_pool = b.pool(name + "_branch_pool_avg", from, kAveragePool3x3);
  branch_pool = b.conv_bn_relu(name + "_branch_pool", branch_pool, same(192, 1, 1));
  return b.concat(name, {branch1x1, branch7x7, branch7x7dbl, branch_pool});
}

std::string inception_d(GraphBuilder& b, const std::string& name, const std::string& from) {
  auto branch3x3 = b.conv_bn_relu(name + "_branch3x3_1", from, same(192, 1, 1));
  branch3x3 = b.conv_bn_relu(name + "_branch3x3_2", branch3x3, conv_params(320, 3, 2));
  auto branch7x7x3 = b.conv_bn_relu(name + "_branch7x7x3_1", from, same(192, 1, 1));
  branch7x7x3 = b.conv_bn_relu(name + "_branch7x7x3_2", branch7x7x3, same(192, 1, 7));
  branch7x7x3 = b.conv_bn_relu(name + "_branch7x7x3_3", branch7x7x3, same(192, 7, 1));
  branch7x7x3 = b.conv_bn_relu(name + "_branch7x7x3_4", branch7x7x3, conv_params(192, 3, 2));
  const auto branch_pool = b.pool(name + "_branch_pool", from, kMaxPool3x3s2);
  return b.concat(name, {branch3x3, branch7x7x3, branch_pool});
}

std::string inception_e(GraphBuilder& b, const std::string& name, const std::string& from) {
  const auto branch1x1 = b.conv_bn_relu(name + "_branch1x1", from, same(320, 1, 1));
  const auto branch3x3_1 = b.conv_bn_relu(name + "_branch3x3_1", from, same(384, 1, 1));
  const auto branch3x3_2a = b.conv_bn_relu(name + "_branch3x3_2a", branch3x3_1, same(384, 1, 3));
  const auto branch3x3_2b = b.conv_bn_relu(name + "_branch3x3_2b", branch3x3_1, same(384, 3, 1));
  const auto branch3x3 = b.concat(name + "_branch3x3", {branch3x3_2a, branch3x3_2b});
  auto branch3x3dbl = b.conv_bn_relu(name + "_branch3x3dbl_1", from, same(448, 1, 1));
  branch3x3dbl = b.conv_bn_relu(name + "_branch3x3dbl_2", branch3x3dbl, same(384, 3, 3));
  const auto branch3x3dbl_3a =
      b.conv_bn_relu(name + "_branch3x3dbl_3a", branch3x3dbl, same(384, 1, 3));
  const auto branch3x3dbl_3b =
      b.conv_bn_relu(name + "_branch3x3dbl_3b", branch3x3dbl, same(384, 3, 1));
  branch3x3dbl = b.concat(name + "_branch3x3dbl", {branch3x3dbl_3a, branch3x3dbl_3b});
  auto branch_pool = b.pool(name + "_branch_pool_avg", from, kAveragePool3x3);
  branch_pool = b.conv_bn_relu(name + "_branch_pool", branch_pool, same(192, 1, 1));
  return b.concat(name, {branch1x1, branch3x3, branch3x3dbl, branch_pool});
}

void auxiliary_classifier(GraphBuilder& b, const std::string& from, std::int64_t classes) {
  auto x = b.pool("aux_pool", from,
                  PoolingParams{.mode = PoolMode::average, .kernel = {5}, .stride = {3}});
  x = b.conv_bn_relu("aux_conv0", x, same(128, 1, 1));
  x = b.conv_bn_relu("aux_conv1", x, conv_params(768, 5));
  x = b.pool("aux_avgpool", x, PoolingParams{.mode = PoolMode::average, .global = true});
  x = b.fully_connected("aux_fc", x, classes);
  b.softmax_cross_entropy("aux_loss", x);
}

ModelGraph build_inception_v3(std::int64_t image_size, std::int64_t classes, bool aux_logits) {
  GraphBuilder b("inception_v3");
  auto x = b.input("input", 3, {image_size, image_size});
  x = b.conv_bn_relu("conv2d_1a_3x3", x, conv_params(32, 3, 2));
  x = b.conv_bn_relu("conv2d_2a_3x3", x, conv_params(32, 3));
  x = b.conv_bn_relu("conv2d_2b_3x3", x, same(64, 3, 3));
  x = b.pool("maxpool1", x, kMaxPool3x3s2);
  x = b.conv_bn_relu("conv2d_3b_1x1", x, same(80, 1, 1));
  x = b.conv_bn_relu("conv2d_4a_3x3", x, conv_params(192, 3));
  x = b.pool("maxpool2", x, kMaxPool3x3s2);
  x = inception_a(b, "mixed_5b", x, 32);
  x = inception_a(b, "mixed_5c", x, 64);
  x = inception_a(b, "mixed_5d", x, 64);
  x = inception_b(b, "mixed_6a", x);
  x = inception_c(b, "mixed_6b", x, 128);
  x = inception_c(b, "mixed_6c", x, 160);
  x = inception_c(b, "mixed_6d", x, 160);
  x = inception_c(b, "mixed_6e", x, 192);
  if (aux_logits) auxiliary_classifier(b, x, classes);
  x = inception_d(b, "mixed_7a", x);
  x = inception_e(b, "mixed_7b", x);
  x = inception_e(b, "mixed_7c", x);
  x = b.pool("avgpool", x, PoolingParams{.mode = PoolMode::average, .global = true});
  x = b.dropout("dropout", x, 0.5);
  x = b.fully_connected("fc", x, classes);
  b.softmax_cross_entropy("loss", x);
  return std::move(b).build();
}

}  // namespace

constexpr std::int64_t kSmallestInceptionImageWithAux = 299;

ZooModel inception_v3() {
  auto image_size = image_size_option(299);
  image_size.minimum = 75;  // Mixed_7a's 3x3/2 reductions need at least 3x3 features
  return {.name = "inception_v3",
          .summary = "Inception v3 image classifier with its auxiliary classifier",
          .definition = "torchvision inception_v3 (Szegedy et al. 2016)",
          .options = {image_size,
                      classes_option(),
                      {.name = "aux_logits",
                       .type = OptionType::boolean,
                       .default_value = "true",
                       .help = "add the auxiliary classifier after Mixed_6e and its loss "
                               "(needs image_size >= " +
                               std::to_string(kSmallestInceptionImageWithAux) + ")"}},
          .build = [](const ModelOptions& o) {
            const auto size = image_size_for_aux(
                o, kSmallestInceptionImageWithAux,
                "the auxiliary classifier's 5x5 convolution needs Mixed_6e's features at 17x17");
            return build_inception_v3(size, o.integer("classes"), o.boolean("aux_logits"));
          }};
}

}  // namespace tessera::zoo
