#pragma once
// One factory per zoo model, each in its own file; model_zoo.cpp lists them.
#include "tessera/core/zoo/model_zoo.hpp"

namespace tessera::zoo {

ZooModel cosmoflow();
ZooModel unet3d();
ZooModel alexnet();
ZooModel overfeat();
ZooModel vgg16();
ZooModel googlenet();
ZooModel resnet18();
ZooModel resnet50();
ZooModel inception_v3();
ZooModel deepbench_conv();
ZooModel gnmt();
ZooModel biglstm();
ZooModel gpt2();
ZooModel bert();

// Options most image classifiers share.
ModelOptionSpec image_size_option(std::int64_t default_size);
ModelOptionSpec classes_option(std::int64_t default_classes = 1000);
// Options the transformers share.
ModelOptionSpec sequence_length_option(std::int64_t default_steps);
ModelOptionSpec attention_option();

// Shorthand for ConvolutionParams in model definitions.
ConvolutionParams conv_params(std::int64_t out_channels, std::int64_t kernel,
                              std::int64_t stride = 1, std::int64_t padding = 0, bool bias = false);

}  // namespace tessera::zoo
