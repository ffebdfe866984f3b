// ResNet-18 and ResNet-50 (He et al., 2016) as in torchvision (models/resnet.py): a 7x7/2 stem
// convolution, batch-norm, ReLU and max-pool 3/2 pad 1; four stages of 64, 128, 256, 512 planes
// whose first block strides by 2 (except stage 1); global average pool; fc to the classes.
// Convolutions have no bias; every batch-norm is affine (2 parameters per channel).
//   resnet18: BasicBlock (3x3, 3x3) x [2, 2, 2, 2], 11,689,512 parameters at 1000 classes.
//   resnet50: Bottleneck v1.5 (1x1, 3x3 carrying the stride, 1x1 to 4x planes) x [3, 4, 6, 3],
//             25,557,032 parameters at 1000 classes.
// A block whose stride or channel count changes gets the 1x1 strided convolution + batch-norm
// downsample on its shortcut; the residual add is followed by ReLU.
#include <array>

#include "tessera/core/model/graph_builder.hpp"
#include "zoo_models.hpp"

namespace tessera::zoo {
namespace {

struct Block {
  std::string output;
  std::int64_t channels = 0;
};

// The shortcut of a block: the input itself, or a 1x1 convolution + batch-norm when the shape
// changes.
std::string shortcut(GraphBuilder& b, const std::string& prefix, const std::string& from,
                     std::int64_t in_channels, std::int64_t out_channels, std::int64_t stride) {
  if (stride == 1 && in_channels == out_channels) return from;
  auto x = b.conv(prefix + "_downsample", from, conv_params(out_channels, 1, stride));
  return b.batch_norm(prefix + "_downsample_bn", x);
}

Block basic_block(GraphBuilder& b, const std::string& prefix, const std::string& from,
                  std::int64_t in_channels, std::int64_t planes, std::int64_t stride) {
  auto x = b.conv_bn_relu(prefix + "_conv1", from, conv_params(planes, 3, stride, 1));
  x = b.conv(prefix + "_conv2", x, conv_params(planes, 3, 1, 1));
  x = b.batch_norm(prefix + "_conv2_bn", x);
  const auto identity = shortcut(b, prefix, from, in_channels, planes, stride);
  x = b.add(prefix + "_add", {x, identity});
  return {b.relu(prefix + "_relu", x), planes};
}

Block bottleneck_block(GraphBuilder& b, const std::string& prefix, const std::string& from,
                       std::int64_t in_channels, std::int64_t planes, std::int64_t stride) {
  constexpr std::int64_t kExpansion = 4;
  auto x = b.conv_bn_relu(prefix + "_conv1", from, conv_params(planes, 1));
  x = b.conv_bn_relu(prefix + "_conv2", x, conv_params(planes, 3, stride, 1));
  x = b.conv(prefix + "_conv3", x, conv_params(planes * kExpansion, 1));
  x = b.batch_norm(prefix + "_conv3_bn", x);
  const auto identity = shortcut(b, prefix, from, in_channels, planes * kExpansion, stride);
  x = b.add(prefix + "_add", {x, identity});
  return {b.relu(prefix + "_relu", x), planes * kExpansion};
}

ModelGraph build_resnet(const std::string& name, bool bottleneck, const std::array<int, 4>& blocks,
                        std::int64_t image_size, std::int64_t classes) {
  GraphBuilder b(name);
  auto x = b.input("input", 3, {image_size, image_size});
  x = b.conv_bn_relu("conv1", x, conv_params(64, 7, 2, 3));
  x = b.pool("maxpool", x,
             PoolingParams{.mode = PoolMode::max, .kernel = {3}, .stride = {2}, .padding = {1}});
  Block block{x, 64};
  for (int stage = 0; stage < 4; ++stage) {
    const std::int64_t planes = std::int64_t{64} << stage;
    for (int i = 0; i < blocks[static_cast<std::size_t>(stage)]; ++i) {
      const auto prefix = "layer" + std::to_string(stage + 1) + "_" + std::to_string(i);
      const std::int64_t stride = (stage > 0 && i == 0) ? 2 : 1;
      block = bottleneck ? bottleneck_block(b, prefix, block.output, block.channels, planes, stride)
                         : basic_block(b, prefix, block.output, block.channels, planes, stride);
    }
  }
  x = b.pool("avgpool", block.output, PoolingParams{.mode = PoolMode::average, .global = true});
  x = b.fully_connected("fc", x, classes);
  b.softmax_cross_entropy("loss", x);
  return std::move(b).build();
}

std::vector<ModelOptionSpec> options() {
  return {image_size_option(224), classes_option()};
}

}  // namespace

ZooModel resnet18() {
  return {.name = "resnet18",
          .summary = "ResNet-18 image classifier (basic blocks)",
          .definition = "torchvision resnet18 (He et al. 2016)",
          .options = options(),
          .build = [](const ModelOptions& o) {
            return build_resnet("resnet18", false, {2, 2, 2, 2}, o.integer("image_size"),
                                o.integer("classes"));
          }};
}

ZooModel resnet50() {
  return {.name = "resnet50",
          .summary = "ResNet-50 image classifier (bottleneck blocks, stride on the 3x3)",
          .definition = "torchvision resnet50, ResNet v1.5 (He et al. 2016)",
          .options = options(),
          .build = [](const ModelOptions& o) {
            return build_resnet("resnet50", true, {3, 4, 6, 3}, o.integer("image_size"),
                                o.integer("classes"));
          }};
}

}  // namespace tessera::zoo
