// VGG-16 (configuration D of Simonyan & Zisserman, 2015) as in torchvision (models/vgg.py,
// vgg16 without batch-norm): thirteen 3x3 convolutions with bias and padding 1, each followed by
// ReLU, in five stages of 64, 64 | 128, 128 | 256 x3 | 512 x3 | 512 x3 channels, each stage ending
// in max-pool 2/2; AdaptiveAvgPool2d(7, 7); fc 4096, ReLU, dropout 0.5, fc 4096, ReLU, dropout 0.5,
// fc to the classes. 138,357,544 parameters at 1000 classes.
//
// The adaptive pool (PoolingParams::adaptive_output) is the identity at 224x224.
#include "tessera/core/model/graph_builder.hpp"
#include "zoo_models.hpp"

namespace tessera::zoo {
namespace {

constexpr std::int64_t kVgg16PooledExtent = 7;

ModelGraph build_vgg16(std::int64_t image_size, std::int64_t classes) {
  GraphBuilder b("vgg16");
  auto x = b.input("input", 3, {image_size, image_size});
  const std::vector<std::vector<std::int64_t>> stages = {
      {64, 64}, {128, 128}, {256, 256, 256}, {512, 512, 512}, {512, 512, 512}};
  for (std::size_t stage = 0; stage < stages.size(); ++stage) {
    const auto id = std::to_string(stage + 1);
    for (std::size_t i = 0; i < stages[stage].size(); ++i) {
      const auto layer = id + "_" + std::to_string(i + 1);
      x = b.conv("conv" + layer, x, conv_params(stages[stage][i], 3, 1, 1, true));
      x = b.relu("relu" + layer, x);
    }
    x = b.pool("pool" + id, x, PoolingParams{.mode = PoolMode::max});
  }
  x = b.pool("avgpool", x,
             PoolingParams{.mode = PoolMode::average, .adaptive_output = kVgg16PooledExtent});
  x = b.fully_connected("fc6", x, 4096);
  x = b.relu("relu6", x);
  x = b.dropout("drop6", x, 0.5);
  x = b.fully_connected("fc7", x, 4096);
  x = b.relu("relu7", x);
  x = b.dropout("drop7", x, 0.5);
  x = b.fully_connected("fc8", x, classes);
  b.softmax_cross_entropy("loss", x);
  return std::move(b).build();
}

}  // namespace

ZooModel vgg16() {
  auto image_size = image_size_option(224);
  image_size.minimum = 224;  // pool5 must reach the classifier's 7x7
  image_size.help += " (at least 224, where pool5 reaches 7x7)";
  return {.name = "vgg16",
          .summary = "VGG-16 image classifier (configuration D, no batch-norm)",
          .definition = "torchvision vgg16 (Simonyan & Zisserman 2015, configuration D)",
          .options = {image_size, classes_option()},
          .build = [](const ModelOptions& o) {
            return build_vgg16(o.integer("image_size"), o.integer("classes"));
          }};
}

}  // namespace tessera::zoo
