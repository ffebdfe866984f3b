// Softmax cross-entropy over logits split by class across a tensor group (the vocabulary of a
// column-split head, Megatron-LM's vocab-parallel cross-entropy): each rank holds its classes'
// logits of every position. The group agrees on each position's largest logit (a max
// all-reduce), then sums the exponentials and the target's logit, which only the rank holding
// the target's class contributes (a sum all-reduce); every rank then has the loss and writes the
// gradient of its own classes. The arithmetic runs on the host in doubles, as the CPU kernel of
// the whole softmax does; labels are class ids of the whole vocabulary. A padded vocabulary's
// classes past its end (the last ranks', TensorPart::vocabulary) take no part: their logits are
// left out of the softmax and their gradients are zero.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "execution_context.hpp"
#include "pointwise_executors.hpp"

namespace tessera::kernels::real {
namespace {

class SplitCrossEntropyLoss : public LayerExecutor {
 public:
  SplitCrossEntropyLoss(const ResolvedLayer& layer, const LocalShapes& shapes,
                        ExecutionContext& context)
      : LayerExecutor(layer.layer.name),
        batch_(shapes.batch),
        classes_(layer.input_shapes.at(0).c),
        first_class_(shapes.tensor.first_row(classes_)),
        held_(shapes.tensor.rows_held(classes_)),
        positions_(shapes.input_voxels.at(0)),
        scale_(loss_scale(shapes, layer.input_shapes.at(0).spatial_elements(), context)),
        context_(context) {
    gradient_ = context.device.allocate(static_cast<std::size_t>(floats()) * sizeof(float));
  }

  // The rank's largest logit of each position.
  void forward(StepPart) override {
    labels_ = context_.labels;
    if (static_cast<std::int64_t>(labels_.size()) != batch_ * positions_) {
      throw std::invalid_argument("layer " + name() + ": expected " +
                                  std::to_string(batch_ * positions_) + " labels, got " +
                                  std::to_string(labels_.size()));
    }
    logits_.resize(static_cast<std::size_t>(floats()));
    context_.device.copy_to_host(t_.x[0], logits_.data(), logits_.size());
    largest_.assign(labels_.size(), -HUGE_VAL);
    for (std::size_t index = 0; index < labels_.size(); ++index) {
      for (std::int64_t c = 0; c < held_; ++c) {
        largest_[index] = std::max<double>(largest_[index], logit(index, c));
      }
    }
  }

  bool sum_over_tensor_group(Direction pass, Communicator& group) override {
    if (pass != Direction::forward) return false;
    group.allreduce_max(largest_.data(), largest_.size());
    // Per position: the sum of exponentials, then the target's logit (both less the maximum).
    const std::size_t count = labels_.size();
    std::vector<double> sums(2 * count, 0.0);
    for (std::size_t index = 0; index < count; ++index) {
      for (std::int64_t c = 0; c < held_; ++c) {
        sums[index] += std::exp(logit(index, c) - largest_[index]);
      }
      const std::int64_t target = labels_[index] - first_class_;
      if (target >= 0 && target < classes_) {
        sums[count + index] = logit(index, target) - largest_[index];
      }
    }
    group.allreduce_sum(sums.data(), sums.size());
    double total = 0;
    std::vector<float> gradient(logits_.size(), 0.0F);
    for (std::size_t index = 0; index < count; ++index) {
      total += std::log(sums[index]) - sums[count + index];
      for (std::int64_t c = 0; c < held_; ++c) {
        const double target = labels_[index] - first_class_ == c ? 1.0 : 0.0;
        gradient[at(index, c)] = static_cast<float>(
            (std::exp(logit(index, c) - largest_[index]) / sums[index] - target) * scale_);
      }
    }
    loss_ = scale_ * total;
    context_.device.copy_to_device(gradient.data(), gradient_->data(), gradient.size());
    return true;
  }

  void backward_data(StepPart) override {
    context_.device.copy_on_device(gradient_->data(), t_.dx[0], static_cast<std::size_t>(floats()));
  }
  double loss() const override { return loss_; }

 private:
  std::int64_t floats() const { return batch_ * classes_ * positions_; }
  // Logits are N x C x positions; `index` counts positions sample by sample.
  std::size_t at(std::size_t index, std::int64_t c) const {
    const auto sample = static_cast<std::int64_t>(index) / positions_;
    const auto position = static_cast<std::int64_t>(index) % positions_;
    return static_cast<std::size_t>((sample * classes_ + c) * positions_ + position);
  }
  double logit(std::size_t index, std::int64_t c) const { return logits_[at(index, c)]; }

  std::int64_t batch_, classes_, first_class_, held_, positions_;
  double scale_;
  ExecutionContext& context_;
  std::unique_ptr<DeviceMemory> gradient_;
  std::vector<std::int32_t> labels_;
  std::vector<float> logits_;
  std::vector<double> largest_;
  double loss_ = 0;
};

}  // namespace

std::unique_ptr<LayerExecutor> make_split_cross_entropy_executor(const ResolvedLayer& layer,
                                                                 const LocalShapes& shapes,
                                                                 ExecutionContext& context) {
  return std::make_unique<SplitCrossEntropyLoss>(layer, shapes, context);
}

}  // namespace tessera::kernels::real
