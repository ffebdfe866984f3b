// AlexNet as in torchvision (models/alexnet.py, after Krizhevsky's "one weird trick" paper, 2014):
// the single-tower network without local response normalisation or grouped convolutions. Five
// convolutions with bias (64 11x11/4 pad 2, 192 5x5 pad 2, 384, 256, 256 3x3 pad 1), each followed
// by ReLU; max-pool 3/2 after conv1, conv2 and conv5; AdaptiveAvgPool2d(6, 6); dropout 0.5, fc
// 4096, ReLU, dropout 0.5, fc 4096, ReLU, fc to the classes. 61,100,840 parameters at 1000 classes.
//
// The adaptive pool (PoolingParams::adaptive_output) is the identity at 224x224.
#include "tessera/core/model/graph_builder.hpp"
#include "zoo_models.hpp"

namespace tessera::zoo {
namespace {

constexpr std::int64_t kAlexNetPooledExtent = 6;

ModelGraph build_alexnet(std::int64_t image_size, std::int64_t classes) {
  GraphBuilder b("alexnet");
  auto x = b.input("input", 3, {image_size, image_size});
  const PoolingParams max_pool{.mode = PoolMode::max, .kernel = {3}, .stride = {2}};
  x = b.conv("conv1", x, conv_params(64, 11, 4, 2, true));
  x = b.relu("relu1", x);
  x = b.pool("pool1", x, max_pool);
  x = b.conv("conv2", x, conv_params(192, 5, 1, 2, true));
  x = b.relu("relu2", x);
  x = b.pool("pool2", x, max_pool);
  x = b.conv("conv3", x, conv_params(384, 3, 1, 1, true));
  x = b.relu("relu3", x);
  x = b.conv("conv4", x, conv_params(256, 3, 1, 1, true));
  x = b.relu("relu4", x);
  x = b.conv("conv5", x, conv_params(256, 3, 1, 1, true));
  x = b.relu("relu5", x);
  x = b.pool("pool5", x, max_pool);
  x = b.pool("avgpool", x,
             PoolingParams{.mode = PoolMode::average, .adaptive_output = kAlexNetPooledExtent});
  x = b.dropout("drop6", x, 0.5);
  x = b.fully_connected("fc6", x, 4096);
  x = b.relu("relu6", x);
  x = b.dropout("drop7", x, 0.5);
  x = b.fully_connected("fc7", x, 4096);
  x = b.relu("relu7", x);
  x = b.fully_connected("fc8", x, classes);
  b.softmax_cross_entropy("loss", x);
  return std::move(b).build();
}

}  // namespace

ZooModel alexnet() {
  auto image_size = image_size_option(224);
  image_size.minimum = 223;  // pool5 must reach the classifier's 6x6
  image_size.help += " (at least 223, where pool5 reaches 6x6)";
  return {.name = "alexnet",
          .summary = "AlexNet image classifier, single tower",
          .definition = "torchvision AlexNet (Krizhevsky 2014 one-weird-trick variant, no LRN)",
          .options = {image_size, classes_option()},
          .build = [](const ModelOptions& o) {
            return build_alexnet(o.integer("image_size"), o.integer("classes"));
          }};
}

}  // namespace tessera::zoo
