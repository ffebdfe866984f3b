#include "layer_executor.hpp"

#include <algorithm>
#include <stdexcept>

#include "pointwise_executors.hpp"
#include "sequence_executors.hpp"
#include "window_executors.hpp"

namespace tessera::kernels::real {

void LayerExecutor::halo_start(Direction /*pass*/, int /*axis*/) {
  refuse("a halo exchange");
}
void LayerExecutor::halo_wait(Direction /*pass*/) {
  refuse("a halo wait");
}
void LayerExecutor::sum_statistics(Direction /*pass*/) {
  refuse("a sum of statistics over the spatial group");
}

void LayerExecutor::take_part(std::span<const float> whole, std::span<float> part) const {
  if (whole.size() != part.size()) {
    throw std::invalid_argument("layer " + name_ + ": expected " + std::to_string(part.size()) +
                                " parameters, got " + std::to_string(whole.size()));
  }
  std::copy(whole.begin(), whole.end(), part.begin());
}

void LayerExecutor::refuse(const std::string& op) const {
  throw std::logic_error("layer " + name_ + ": the step program asks for " + op +
                         ", which this layer's executor does not make");
}

bool program_has(const StepProgram& program, std::size_t layer, StepOpKind kind, StepPart part) {
  return std::any_of(program.ops.begin(), program.ops.end(), [&](const StepOp& op) {
    return op.layer == layer && op.kind == kind && (kind != StepOpKind::compute || op.part == part);
  });
}

std::unique_ptr<LayerExecutor> make_layer_executor(const ModelGraph& model, std::size_t index,
                                                   bool spatially_split, const LocalShapes& shapes,
                                                   const StepProgram& program,
                                                   ExecutionContext& context) {
  const auto& layer = model.layers().at(index);
  if (is_sequence_kind(layer.layer.kind)) {
    return make_sequence_executor(model, index, spatially_split, shapes, program, context);
  }
  switch (layer.layer.kind) {
    case LayerKind::convolution:
    case LayerKind::transposed_convolution:
      return make_convolution_executor(layer, index, spatially_split, shapes, program, context);
    case LayerKind::pooling:
      return make_pooling_executor(layer, spatially_split, shapes, context);
    default:
      return make_pointwise_executor(model, index, spatially_split, shapes, program, context);
  }
}

std::uint64_t mix_seed(std::uint64_t a, std::uint64_t b) {
  // splitmix64 of the combination: consecutive inputs give unrelated outputs.
  std::uint64_t z = a * 0x9E3779B97F4A7C15ULL + b + 0x632BE59BD9B4E019ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

void fill_uniform(std::uint64_t seed, std::uint64_t stream, float bound, std::span<float> values) {
  const std::uint64_t base = mix_seed(seed, stream);
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::uint64_t bits = mix_seed(base, i) >> 40;  // 24 random bits
    const double unit = static_cast<double>(bits) / static_cast<double>(1ULL << 24);
    values[i] = static_cast<float>((2.0 * unit - 1.0) * bound);
  }
}

std::vector<float> uniform_values(std::uint64_t seed, std::uint64_t stream, float bound,
                                  std::int64_t count) {
  std::vector<float> values(static_cast<std::size_t>(count));
  fill_uniform(seed, stream, bound, values);
  return values;
}

}  // namespace tessera::kernels::real
