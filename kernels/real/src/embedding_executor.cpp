// An embedding: a lookup of its token stream's ids in the table, and in backward the output
// gradient's rows added at their tokens. A tied embedding (shared_with) reads its owner's table
// and adds its rows into the owner's gradient, in the step program's order (shared_table.cpp).
// Split over a tensor group by its vocabulary, a rank holds an equal share of the rows: tokens of
// other rows give zero rows, and the group's all-reduce after forward sums the shares. Where the
// degree does not divide the vocabulary the last ranks' rows past it are padding: zero, never
// looked up, so their gradients stay zero.
#include <algorithm>
#include <stdexcept>

#include "execution_context.hpp"
#include "sequence_executors.hpp"
#include "tessera/kernels/sequence_kernels.hpp"

namespace tessera::kernels::real {
namespace {

class Embedding : public LayerExecutor {
 public:
  Embedding(const ResolvedLayer& layer, const LocalShapes& shapes, bool owns_table, float beta,
            ExecutionContext& context)
      : LayerExecutor(layer.layer.name),
        params_(std::get<EmbeddingParams>(layer.layer.params)),
        rows_(rows_held(params_.vocabulary, shapes.tensor)),
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
    // MLPerf GNMT's init_lstm_/embedding: uniform within 0.1; a share of the rows takes its rows
    // of the whole table's values.
    take_part(table_initial_values(seed, rows_.vocabulary, params_.dimension), values);
  }
  void take_part(std::span<const float> whole, std::span<float> part) const override {
    const auto held = static_cast<std::size_t>(
        std::clamp<std::int64_t>(rows_.vocabulary - rows_.first, 0, rows_.count) *
        params_.dimension);
    const auto rest = std::copy_n(whole.begin() + rows_.first * params_.dimension,
                                  std::min(held, part.size()), part.begin());
    std::fill(rest, part.end(), 0.0F);
  }
  void forward(StepPart) override {
    kernels_.embedding_forward(batch_, channels_, steps_, params_.channel, rows_, params_.dimension,
                               t_.x[0], weights_, t_.y);
  }
  void backward_filter() override {
    kernels_.embedding_backward(batch_, channels_, steps_, params_.channel, rows_,
                                params_.dimension, t_.x[0], t_.dy, gradients_, beta_);
  }

 private:
  static TableRows rows_held(std::int64_t local_vocabulary, const TensorPart& part) {
    if (part.split != TensorSplit::vocabulary) return TableRows::whole(local_vocabulary);
    return {.vocabulary = part.vocabulary,
            .first = part.first_row(local_vocabulary),
            .count = local_vocabulary};
  }

  EmbeddingParams params_;
  TableRows rows_;
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
  const float beta = table_gradient_beta(model, index, program, context);
  return std::make_unique<Embedding>(layer, shapes, parameter_owner(index, context) == index, beta,
                                     context);
}

}  // namespace tessera::kernels::real
