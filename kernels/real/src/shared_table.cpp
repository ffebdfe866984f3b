// Tied weights in the real backend: a layer reading an embedding's table (another embedding, or
// a projection as a language model's head; core's LayerKindRules::table_owner) works on the
// owner's parameters, and the readers' weight gradients go into the owner's gradient in the
// order of the step program's weight-gradient ops: the first writes it, the others add. A
// reader on another stage than the owner works on a copy held on its stage (core's
// table_copies.hpp), whose gradients the holders sum after the data-parallel all-reduce.
#include "shared_table.hpp"

#include <stdexcept>

#include "sequence_executors.hpp"
#include "tessera/kernels/layer_kernels.hpp"

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

}  // namespace

std::size_t parameter_owner(std::size_t index, const ExecutionContext& context) {
  return context.tables.holder.at(index);
}

float table_gradient_beta(const ModelGraph& model, std::size_t index, const StepProgram& program,
                          const ExecutionContext& context) {
  const std::size_t owner = parameter_owner(index, context);
  std::vector<std::size_t> readers;  // every layer on the table here, this one included
  for (std::size_t i = 0; i < model.layers().size(); ++i) {
    if (parameter_owner(i, context) == owner) readers.push_back(i);
  }
  const auto& name = model.layers().at(index).layer.name;
  const std::int64_t micro_batches = std::max<std::int64_t>(1, context.micro_batches);
  bool first_everywhere = true, first_nowhere = true;
  for (std::int64_t k = 0; k < micro_batches; ++k) {
    const auto mine = filter_op(program, index, k);
    if (!mine) {
      throw std::logic_error("layer " + name +
                             ": the step program has no weight-gradient op for micro-batch " +
                             std::to_string(k));
    }
    bool first = true;
    for (std::size_t other : readers) {
      if (other == index) continue;
      const auto theirs = filter_op(program, other, k);
      if (!theirs) {
        throw std::logic_error("layer " + name + ": its table is shared with " +
                               model.layers()[other].layer.name +
                               ", which has no weight-gradient op on this stage");
      }
      if (*theirs < *mine) first = false;
    }
    first_everywhere = first_everywhere && first;
    first_nowhere = first_nowhere && !first;
  }
  if (!first_everywhere && !first_nowhere) {
    throw std::logic_error("layer " + name +
                           ": the tied layers' weight gradients change order between "
                           "micro-batches");
  }
  return first_everywhere ? 0.0F : 1.0F;
}

std::vector<float> table_initial_values(std::uint64_t seed, std::int64_t rows,
                                        std::int64_t dimension) {
  return uniform_values(seed, 0, 0.1F, rows * dimension);
}

void sum_table_copies(float* gradients, std::size_t floats, const std::vector<int>& stages, int tag,
                      ExecutionContext& context) {
  auto& device = context.device;
  auto& group = *context.layout.stage_group;
  const int mine = group.rank();  // the stage group's rank is the stage
  device.synchronize();           // the gradients are written before they are sent
  std::vector<std::unique_ptr<CommRequest>> sends;
  std::vector<std::unique_ptr<DeviceMemory>> theirs(stages.size());
  for (std::size_t k = 0; k < stages.size(); ++k) {
    if (stages[k] == mine) continue;
    sends.push_back(group.send(gradients, floats, stages[k], tag));
    theirs[k] = device.allocate(floats * sizeof(float));
    group.receive(theirs[k]->data(), floats, stages[k], tag)->wait();
  }
  for (auto& send : sends) send->wait();
  // In stage order on every holder: the same sum, bit for bit, everywhere.
  auto sum = device.allocate(floats * sizeof(float));
  device.fill(sum->data(), floats, 0.0F);
  for (std::size_t k = 0; k < stages.size(); ++k) {
    const float* part = stages[k] == mine ? gradients : theirs[k]->data();
    device.layers().axpy(static_cast<std::int64_t>(floats), 1.0F, part, sum->data());
  }
  device.copy_on_device(sum->data(), gradients, floats);
  device.synchronize();
}

}  // namespace tessera::kernels::real
