// An embedding: a lookup of its token stream's ids in the table, and in backward the output
// gradient's rows added at their tokens. A tied embedding (shared_with) reads its owner's table
// and adds its rows into the owner's gradient: it writes that gradient first, the owner adds
// its own after it (the step program gives a tied embedding a weight-gradient op, and the owner,
// earlier in the model, comes later in backward; checked here for every micro-batch).
#include <stdexcept>

#include "execution_context.hpp"
#include "sequence_executors.hpp"
#include "tessera/kernels/sequence_kernels.hpp"

namespace tessera::kernels::real {
namespace {

// The position of `layer`'s weight-gradient op for `micro_batch` in the program, if any.
std::optional<std::size_t> filter_op(const StepProgram& program, std::size_t layer,
                                     std::int64_t micro_batch) {
  for (std::size_t i = 0; i < program.ops.size(); ++i) {
    const auto& op = program.ops[i];
    if (op.kind == StepOpKind::compute && op.layer == layer &&
        op.direction == Direction::backward_filter && op.micro_batch == micro_batch) {
      return i;
    }
  }
  return std::nullopt;
}

class Embedding : public LayerExecutor {
 public:
  Embedding(const ResolvedLayer& layer, const LocalShapes& shapes, bool owns_table, float beta,
            ExecutionContext& context)
      : LayerExecutor(layer.layer.name),
        params_(std::get<EmbeddingParams>(layer.layer.params)),
        batch_(shapes.batch),
        channels_(layer.input_shapes.at(0).c),
        steps_(layer.output_shape.spatial.at(0)),
        owns_table_(owns_table),
        beta_(beta),
        kernels_(sequence_kernels_for(layer.layer.name, context)) {}
  std::int64_t parameter_floats() const override {
    return owns_table_ ? params_.vocabulary * params_.dimension : 0;
  }
  void initialize(std::uint64_t seed, std::span<float> values) const override {
    // MLPerf GNMT's init_lstm_/embedding: uniform within 0.1.
    fill_uniform(seed, 0, 0.1F, values);
  }
  void forward(StepPart) override {
    kernels_.embedding_forward(batch_, channels_, steps_, params_.channel, params_.vocabulary,
                               params_.dimension, t_.x[0], weights_, t_.y);
  }
  void backward_filter() override {
    kernels_.embedding_backward(batch_, channels_, steps_, params_.channel, params_.vocabulary,
                                params_.dimension, t_.x[0], t_.dy, gradients_, beta_);
  }

 private:
  EmbeddingParams params_;
  std::int64_t batch_, channels_, steps_;
  bool owns_table_;
  float beta_;
  SequenceKernels& kernels_;
};

}  // namespace

std::unique_ptr<LayerExecutor> make_embedding_executor(const ModelGraph& model, std::size_t index,
                                                       const LocalShapes& shapes,
                                                       const StepProgram& program,
                                                       ExecutionContext& context) {
  const auto& layer = model.layers().at(index);
  const std::size_t owner = parameter_owner(model, index);
  // Every layer of the model reading this one's table, itself included, in the order of the
  // step program's weight-gradient ops: the first writes the gradient, the others add.
  std::vector<std::size_t> readers;
  for (std::size_t i = 0; i < model.layers().size(); ++i) {
    if (model.layers()[i].layer.kind == LayerKind::embedding && parameter_owner(model, i) == owner)
      readers.push_back(i);
  }
  const auto& name = layer.layer.name;
  const std::int64_t micro_batches = std::max<std::int64_t>(1, context.micro_batches);
  bool first_everywhere = true, first_nowhere = true;
  for (std::int64_t k = 0; k < micro_batches; ++k) {
    const auto mine = filter_op(program, index, k);
    if (!mine) {
      throw std::logic_error("layer " + name +
                             ": the step program has no weight-gradient op for "
                             "micro-batch " +
                             std::to_string(k));
    }
    bool first = true;
    for (std::size_t other : readers) {
      if (other == index) continue;
      const auto theirs = filter_op(program, other, k);
      if (!theirs) {
        throw std::invalid_argument(
            "layer " + name + ": its table is shared with " + model.layers()[other].layer.name +
            ", which runs on another stage; the real backend keeps a shared table on one stage");
      }
      if (*theirs < *mine) first = false;
    }
    first_everywhere = first_everywhere && first;
    first_nowhere = first_nowhere && !first;
  }
  if (!first_everywhere && !first_nowhere) {
    throw std::logic_error("layer " + name +
                           ": the tied embeddings' weight gradients change order between "
                           "micro-batches");
  }
  return std::make_unique<Embedding>(layer, shapes, owner == index, first_everywhere ? 0.0F : 1.0F,
                                     context);
}

}  // namespace tessera::kernels::real
