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
ModelOptionSpec sequence_length_option(std::int64_t default_steps);
// image_size of a classifier with aux_logits, whose auxiliary classifiers need images of at least
// `smallest_with_aux` (`why`: what they need): std::invalid_argument naming both options where
// aux_logits is on and the image is smaller, rather than a layer of the aux branch reaching
// extent 0.
std::int64_t image_size_for_aux(const ModelOptions& options, std::int64_t smallest_with_aux,
                                const std::string& why);

// What a transformer's options give (transformer_options.cpp): GPT-2's and BERT's shapes.
struct TransformerShape {
  std::int64_t layers = 1;
  std::int64_t hidden = 1;
  std::int64_t heads = 1;
  std::int64_t steps = 1;
  std::int64_t vocabulary = 2;
  bool dropout = true;
  bool fused_attention = true;
};
struct TransformerDefaults {
  TransformerShape shape;
  std::string sizes;            // the published sizes, for the layers option's help
  std::string vocabulary_help;  // what the vocabulary is
};
std::vector<ModelOptionSpec> transformer_options(const TransformerDefaults& defaults);
TransformerShape transformer_shape(const ModelOptions& options);

// Shorthand for ConvolutionParams in model definitions.
ConvolutionParams conv_params(std::int64_t out_channels, std::int64_t kernel,
                              std::int64_t stride = 1, std::int64_t padding = 0, bool bias = false);

}  // namespace tessera::zoo
