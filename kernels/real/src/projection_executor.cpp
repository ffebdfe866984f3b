// A projection: the same linear map at every step of a sequence (the classifier over a
// vocabulary). Trained in full, its output is every class's logit. Trained as a sampled softmax
// (ProjectionParams::sampled = S), its output is S + 1 logits per position: the target's first,
// then S classes drawn once per step (log_uniform_sampler.hpp) and shared by every position,
// replica and micro-batch of the step, so that a run over ranks scores what one rank would. Each
// logit less log Q of its class, and a sampled class that is the position's target pushed out
// of the softmax, as TensorFlow's sampled_softmax_loss does (remove_accidental_hits); the
// cross-entropy after it takes channel 0 as every position's label.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "execution_context.hpp"
#include "log_uniform_sampler.hpp"
#include "parameter_buckets.hpp"
#include "sequence_executors.hpp"
#include "tessera/kernels/sequence_kernels.hpp"

namespace tessera::kernels::real {
namespace {

// A head tied to an embedding (shared_with) works on the owner's table (out x in, the same
// layout) and its gradient goes into the owner's, written or added in the step program's order
// (`beta`, shared_table.cpp). Its bias, where it has one (BERT's decoder), is its own parameter
// (bound apart: LayerExecutor::bind_untied_parameters), zero at first as in BERT's reference
// (google-research/bert run_pretraining.py's output_bias) and Hugging Face's BertLMPredictionHead.
//
// Split over a tensor group (tensor_split.hpp), a rank holds rows of the weight matrix and of the
// bias (column: its output channels) or columns of the matrix and the whole bias (row: its input
// channels, the outputs partial sums that the group's all-reduce adds, so one rank adds the bias),
// initialised as that part of the whole layer's values.
class Projection : public LayerExecutor {
 public:
  // What a projection's weights are: its own, an embedding's table (tied: another layer's), or
  // its copy of a table whose owner is on another stage.
  enum class Weights { own, table, table_copy };
  Projection(const ResolvedLayer& layer, const LocalShapes& shapes, ExecutionContext& context,
             Weights weights = Weights::own, float beta = 0.0F)
      : LayerExecutor(layer.layer.name),
        batch_(shapes.batch),
        in_(layer.input_shapes.at(0).c),
        out_(layer.output_shape.c),
        steps_(layer.output_shape.spatial.at(0)),
        bias_(std::get<ProjectionParams>(layer.layer.params).bias),
        part_(shapes.tensor),
        weights_kind_(weights),
        beta_(beta),
        kernels_(sequence_kernels_for(layer.layer.name, context)) {}
  std::int64_t parameter_floats() const override {
    const std::int64_t biases = bias_ ? out_ : 0;
    return weights_kind_ != Weights::table ? in_ * out_ + biases : biases;
  }
  std::int64_t table_floats() const override { return in_ * out_; }
  void initialize(std::uint64_t seed, std::span<float> values) const override {
    if (weights_kind_ == Weights::own) {
      linear_initial_part(part_, in_, out_, bias_, seed, values);
      return;
    }
    std::fill(values.begin(), values.end(), 0.0F);  // the bias, if any
    if (weights_kind_ == Weights::table_copy) {
      // The table's rows are the classes: this part's rows of the whole table's values.
      const auto table = table_initial_values(seed, part_.whole_out(out_), part_.whole_in(in_));
      take_matrix_part(part_, in_, out_, false, table, values.first(in_ * out_));
    }
  }
  void take_part(std::span<const float> whole, std::span<float> part) const override {
    if (weights_kind_ != Weights::table) {
      take_matrix_part(part_, in_, out_, bias_, whole, part);
      return;
    }
    // The bias alone: this part's classes of the whole layer's (none past the vocabulary).
    const auto first = std::min(
        whole.size(),
        static_cast<std::size_t>(part_.split == TensorSplit::column ? out_ * part_.index : 0));
    const auto rest = std::copy_n(whole.begin() + first,
                                  std::min(part.size(), whole.size() - first), part.begin());
    std::fill(rest, part.end(), 0.0F);
  }
  void forward(StepPart) override {
    const float* bias =
        bias_ && part_.adds_product_bias() ? biases(weights_, untied_weights_) : nullptr;
    kernels_.projection_forward(batch_, in_, out_, steps_, t_.x[0], weights_, bias, t_.y);
  }
  void backward_data(StepPart) override {
    if (t_.dx[0] == nullptr) return;
    kernels_.projection_backward_data(batch_, in_, out_, steps_, t_.dy, weights_, t_.dx[0]);
  }
  void backward_filter() override {
    if (weights_kind_ == Weights::table && bias_) {
      // The table's gradient is written or added as the tie's order says; the bias is its own.
      kernels_.projection_backward_weights(batch_, in_, out_, steps_, t_.x[0], t_.dy, gradients_,
                                           nullptr, beta_);
      kernels_.projection_backward_bias(batch_, out_, steps_, t_.dy, untied_gradients_);
      return;
    }
    kernels_.projection_backward_weights(batch_, in_, out_, steps_, t_.x[0], t_.dy, gradients_,
                                         bias_ ? biases(gradients_, untied_gradients_) : nullptr,
                                         beta_);
  }

 protected:
  std::int64_t batch_, in_, out_, steps_;
  bool bias_;
  TensorPart part_;
  Weights weights_kind_;
  float beta_;
  SequenceKernels& kernels_;

  // Where the biases are: after the matrix in the layer's own parameters, apart from a table
  // another layer holds.
  float* biases(float* parameters, float* untied) const {
    return weights_kind_ == Weights::table ? untied : parameters + in_ * out_;
  }
};

class SampledProjection : public Projection {
 public:
  SampledProjection(const ResolvedLayer& layer, std::size_t index, const LocalShapes& shapes,
                    ExecutionContext& context)
      : Projection(layer, shapes, context),
        vocabulary_(std::get<ProjectionParams>(layer.layer.params).out_features),
        index_(index),
        context_(context) {}
  std::int64_t parameter_floats() const override {
    return in_ * vocabulary_ + (bias_ ? vocabulary_ : 0);
  }
  // Every row of the vocabulary (not split over a tensor group).
  void initialize(std::uint64_t seed, std::span<float> values) const override {
    fill_uniform(seed, 0, static_cast<float>(1.0 / std::sqrt(static_cast<double>(in_))), values);
  }
  void take_part(std::span<const float> whole, std::span<float> part) const override {
    LayerExecutor::take_part(whole, part);
  }
  void forward(StepPart) override {
    choose_rows();
    kernels_.gathered_projection_forward(batch_, in_, out_, steps_, t_.x[0], weights_,
                                         bias_ ? weights_ + in_ * vocabulary_ : nullptr, ids_,
                                         offsets_, t_.y);
  }
  void backward_data(StepPart) override {
    if (t_.dx[0] == nullptr) return;
    choose_rows();  // the micro-batch's own targets: another may have run forward since
    kernels_.gathered_projection_backward_data(batch_, in_, out_, steps_, t_.dy, weights_, ids_,
                                               t_.dx[0]);
  }
  void backward_filter() override {
    choose_rows();
    kernels_.gathered_projection_backward_weights(batch_, in_, vocabulary_, out_, steps_, t_.x[0],
                                                  t_.dy, ids_, gradients_,
                                                  bias_ ? gradients_ + in_ * vocabulary_ : nullptr);
  }

 private:
  // Far enough below any logit that its class takes no share of the softmax.
  static constexpr float kAccidentalHitPenalty = 1e9F;

  // The rows each position scores, for the micro-batch whose labels the context holds.
  void choose_rows() {
    if (sampled_step_ != context_.step) {
      sampled_ = sample_log_uniform(
          vocabulary_, out_ - 1,
          mix_seed(mix_seed(context_.seed, index_), static_cast<std::uint64_t>(context_.step)));
      sampled_step_ = context_.step;
      sampled_offsets_.clear();
      for (const auto id : sampled_.classes) {
        sampled_offsets_.push_back(static_cast<float>(sampled_.log_expected_count(id)));
      }
    }
    const auto& labels = context_.labels;
    if (static_cast<std::int64_t>(labels.size()) != batch_ * steps_) {
      throw std::invalid_argument("layer " + name_ + ": expected " +
                                  std::to_string(batch_ * steps_) + " targets, got " +
                                  std::to_string(labels.size()));
    }
    ids_.resize(static_cast<std::size_t>(batch_ * out_ * steps_));
    offsets_.resize(ids_.size());
    for (std::int64_t n = 0; n < batch_; ++n) {
      for (std::int64_t t = 0; t < steps_; ++t) {
        const std::int32_t target = labels[static_cast<std::size_t>(n * steps_ + t)];
        const auto first = static_cast<std::size_t>(n * out_ * steps_ + t);
        ids_[first] = target;
        offsets_[first] = static_cast<float>(sampled_.log_expected_count(target));
        for (std::int64_t k = 1; k < out_; ++k) {
          const auto at = static_cast<std::size_t>((n * out_ + k) * steps_ + t);
          const auto sampled = static_cast<std::size_t>(k - 1);
          ids_[at] = sampled_.classes[sampled];
          offsets_[at] = sampled_offsets_[sampled] +
                         (sampled_.classes[sampled] == target ? kAccidentalHitPenalty : 0.0F);
        }
      }
    }
  }

  // out_ (Projection's output channels) counts the rows each position scores: its target first,
  // then the sampled classes.
  std::int64_t vocabulary_;
  std::size_t index_;
  ExecutionContext& context_;
  SampledClasses sampled_;
  std::vector<float> sampled_offsets_;  // log Q of each sampled class, this step
  std::int64_t sampled_step_ = -1;
  std::vector<std::int32_t> ids_;
  std::vector<float> offsets_;
};

}  // namespace

std::optional<std::string> unsupported_weight_sharding(const ModelGraph& model) {
  for (const auto& layer : model.layers()) {
    const auto* params = std::get_if<ProjectionParams>(&layer.layer.params);
    if (params != nullptr && !params->shared_with.empty() && params->bias) {
      return "layer " + layer.layer.name +
             ": memory.shard: weights with a head tied to an embedding's table and a bias of its "
             "own is not yet run by the real backend (it gathers one layer's weights at a time); "
             "the simulator predicts it";
    }
  }
  return std::nullopt;
}

std::unique_ptr<LayerExecutor> make_projection_executor(const ModelGraph& model, std::size_t index,
                                                        const LocalShapes& shapes,
                                                        const StepProgram& program,
                                                        ExecutionContext& context) {
  const auto& layer = model.layers().at(index);
  const auto& params = std::get<ProjectionParams>(layer.layer.params);
  if (!params.shared_with.empty()) {
    if (params.sampled > 0) {
      throw std::invalid_argument("layer " + layer.layer.name +
                                  ": a head tied to an embedding's table (shared_with) with a "
                                  "sampled softmax is not yet supported by the real backend");
    }
    const bool copy = parameter_owner(index, context) == index;
    if (!copy && gathers_sharded_weights(program)) {
      if (const auto reason = unsupported_weight_sharding(model)) {
        throw std::invalid_argument(*reason);
      }
    }
    return std::make_unique<Projection>(
        layer, shapes, context, copy ? Projection::Weights::table_copy : Projection::Weights::table,
        table_gradient_beta(model, index, program, context));
  }
  if (params.sampled > 0) {
    return std::make_unique<SampledProjection>(layer, index, shapes, context);
  }
  return std::make_unique<Projection>(layer, shapes, context);
}

}  // namespace tessera::kernels::real
