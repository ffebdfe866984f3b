// OverFeat "fast" model (Sermanet et al., 2014, table 1) as benchmarked in
// soumith/convnet-benchmarks (torch7/imagenet_winners/overfeat.lua): 231x231x3 input; convolutions
// with bias: 96 11x11/4, 256 5x5, 512 3x3 pad 1, 1024 3x3 pad 1, 1024 3x3 pad 1, each followed by
// ReLU; max-pool 2/2 after conv1, conv2 and conv5 (features 1024x6x6); then dropout 0.5, fc 3072,
// ReLU, dropout 0.5, fc 4096, ReLU, fc to the classes.
//
// Parameters at 1000 classes (weights + biases):
//   conv1   3*96*11*11     +   96 =      34,944
//   conv2  96*256*5*5      +  256 =     614,656
//   conv3 256*512*3*3      +  512 =   1,180,160
//   conv4 512*1024*3*3     + 1024 =   4,719,616
//   conv5 1024*1024*3*3    + 1024 =   9,438,208
//   fc6   36864*3072       + 3072 = 113,249,280
//   fc7   3072*4096        + 4096 =  12,587,008
//   fc8   4096*1000        + 1000 =   4,097,000
//   total                          = 145,920,872
// There is no adaptive pool: other image sizes change the extent of the features, and fc6's input
// with it (the Torch definition's fixed View would reject them).
#include "tessera/core/model/graph_builder.hpp"
#include "zoo_models.hpp"

namespace tessera::zoo {
namespace {

ModelGraph build_overfeat(std::int64_t image_size, std::int64_t classes) {
  GraphBuilder b("overfeat");
  auto x = b.input("input", 3, {image_size, image_size});
  const PoolingParams max_pool{.mode = PoolMode::max, .kernel = {2}, .stride = {2}};
  x = b.conv("conv1", x, conv_params(96, 11, 4, 0, true));
  x = b.relu("relu1", x);
  x = b.pool("pool1", x, max_pool);
  x = b.conv("conv2", x, conv_params(256, 5, 1, 0, true));
  x = b.relu("relu2", x);
  x = b.pool("pool2", x, max_pool);
  x = b.conv("conv3", x, conv_params(512, 3, 1, 1, true));
  x = b.relu("relu3", x);
  x = b.conv("conv4", x, conv_params(1024, 3, 1, 1, true));
  x = b.relu("relu4", x);
  x = b.conv("conv5", x, conv_params(1024, 3, 1, 1, true));
  x = b.relu("relu5", x);
  x = b.pool("pool5", x, max_pool);
  x = b.dropout("drop6", x, 0.5);
  x = b.fully_connected("fc6", x, 3072);
  x = b.relu("relu6", x);
  x = b.dropout("drop7", x, 0.5);
  x = b.fully_connected("fc7", x, 4096);
  x = b.relu("relu7", x);
  x = b.fully_connected("fc8", x, classes);
  b.softmax_cross_entropy("loss", x);
  return std::move(b).build();
}

}  // namespace

ZooModel overfeat() {
  auto image_size = image_size_option(231);
  image_size.minimum = 71;  // the smallest input whose pool5 output is at least 1x1
  return {.name = "overfeat",
          .summary = "OverFeat fast image classifier",
          .definition = "OverFeat fast (Sermanet et al. 2014) as in soumith/convnet-benchmarks",
          .options = {image_size, classes_option()},
          .build = [](const ModelOptions& o) {
            return build_overfeat(o.integer("image_size"), o.integer("classes"));
          }};
}

}  // namespace tessera::zoo
