// Statistical efficiency the zoo models carry from publications. Only figures stated in a
// source's text or tables are used; a model without such figures has none (a scenario may give
// its own `training` key). Each entry names the source and the quality it reaches.
#include "tessera/core/time_to_train/time_to_train.hpp"

namespace tessera {
namespace {

// ILSVRC-2012 (ImageNet-1k) training images (Russakovsky et al. 2015).
constexpr double kImageNetTrainingImages = 1'281'167;

bool option_is(const ModelSection& model, const std::string& name, const std::string& value) {
  auto it = model.options.find(name);
  return it == model.options.end() || it->second == value;
}

// Goyal et al. 2017, "Accurate, Large Minibatch SGD: Training ImageNet in 1 Hour": ResNet-50
// trained for 90 epochs reaches the small-minibatch top-1 error at every minibatch from 256 to
// 8k (Table 1 and Figure 1: 23.60 +- 0.12% at 256, 23.74 +- 0.09% at 8k, with the linear
// learning-rate scaling rule and 5 warm-up epochs); above 8k the error after 90 epochs rises, so
// no larger batch reached the target in 90 epochs and those batches are extrapolated.
StatisticalEfficiency goyal2017_resnet50() {
  StatisticalEfficiency e;
  e.target = TrainingTarget::table;
  e.epoch_samples = kImageNetTrainingImages;
  for (std::int64_t batch : {std::int64_t{256}, std::int64_t{8192}}) {
    e.table.push_back({batch, 90.0 * kImageNetTrainingImages / static_cast<double>(batch)});
  }
  e.source =
      "Goyal et al. 2017 (Accurate, Large Minibatch SGD), Table 1 and Figure 1: 90 epochs at "
      "minibatches 256 to 8k";
  e.quality = "ResNet-50 ImageNet top-1 error of the minibatch-256 baseline (23.6%)";
  e.origin = "the zoo's published figures for resnet50";
  return e;
}

}  // namespace

std::optional<StatisticalEfficiency> published_statistical_efficiency(const ModelSection& model) {
  // The ImageNet-1k setting of the source: its classes and image size.
  if (model.zoo_name == "resnet50" && option_is(model, "classes", "1000") &&
      option_is(model, "image_size", "224")) {
    return goyal2017_resnet50();
  }
  return std::nullopt;
}

}  // namespace tessera
