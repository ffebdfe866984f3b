// 3D U-Net as used with spatial parallelism (Cicek et al., 2016; LBANN/Oyama et al. 2020 sizes):
// encoder blocks of two 3^3 conv + batch-norm + ReLU with filters [32,64], [64,128], [128,256],
// bottom [256,512]; max-pool 2^3 between levels; decoder transposed conv 2^3 stride 2 (no bias),
// concatenation with the skip, two conv blocks; a 1^3 conv to the classes; softmax cross-entropy.
#include "tessera/core/model/graph_builder.hpp"
#include "tessera/core/model/model_graph.hpp"
#include "zoo_models.hpp"

namespace tessera::zoo {
namespace {

ModelGraph build_unet3d(std::int64_t width, std::int64_t channels, std::int64_t classes) {
  if (width % 8 != 0) {
    throw ModelError(
        "input", "width must be a multiple of 8 (three 2x poolings), got " + std::to_string(width));
  }
  GraphBuilder b("unet3d");
  auto x = b.input("input", channels, {width, width, width});
  const std::int64_t down[4][2] = {{32, 64}, {64, 128}, {128, 256}, {256, 512}};
  std::vector<std::string> skips;
  for (int level = 0; level < 4; ++level) {
    const auto id = std::to_string(level + 1);
    if (level > 0) x = b.pool("down" + id + "_pool", x, PoolingParams{.mode = PoolMode::max});
    x = b.conv_bn_relu("down" + id + "_conv1", x, conv_params(down[level][0], 3, 1, 1));
    x = b.conv_bn_relu("down" + id + "_conv2", x, conv_params(down[level][1], 3, 1, 1));
    skips.push_back(x);
  }
  const std::int64_t up_filters[3] = {512, 256, 128};
  const std::int64_t up_blocks[3] = {256, 128, 64};
  for (int level = 0; level < 3; ++level) {
    const auto id = std::to_string(3 - level);
    x = b.transposed_conv("up" + id + "_upconv", x, conv_params(up_filters[level], 2, 2, 0));
    x = b.concat("up" + id + "_concat", {skips[2 - level], x});
    x = b.conv_bn_relu("up" + id + "_conv1", x, conv_params(up_blocks[level], 3, 1, 1));
    x = b.conv_bn_relu("up" + id + "_conv2", x, conv_params(up_blocks[level], 3, 1, 1));
  }
  x = b.conv("classifier", x, conv_params(classes, 1, 1, 0, true));
  b.softmax_cross_entropy("loss", x);
  auto model = std::move(b).build();
  model.set_default_mini_batch(1);
  return model;
}

}  // namespace

ZooModel unet3d() {
  return {.name = "unet3d",
          .summary = "3D U-Net segmentation network, every layer spatially parallel",
          .definition = "3D U-Net (Cicek et al. 2016) with the filter counts of Oyama et al. 2020",
          .options = {{.name = "width",
                       .type = OptionType::integer,
                       .default_value = "128",
                       .minimum = 8,
                       .maximum = 4096,
                       .help = "input volume edge in voxels, a multiple of 8"},
                      {.name = "channels",
                       .type = OptionType::integer,
                       .default_value = "1",
                       .minimum = 1,
                       .maximum = 64,
                       .help = "input channels"},
                      {.name = "classes",
                       .type = OptionType::integer,
                       .default_value = "3",
                       .minimum = 2,
                       .maximum = 1024,
                       .help = "segmentation classes"}},
          .build = [](const ModelOptions& o) {
            return build_unet3d(o.integer("width"), o.integer("channels"), o.integer("classes"));
          }};
}

}  // namespace tessera::zoo
