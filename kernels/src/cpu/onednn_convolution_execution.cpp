#include "cpu/onednn_convolution_execution.hpp"

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include "tessera/core/common/quantity.hpp"
#include "tessera/kernels/device.hpp"

namespace tessera::kernels::onednn {
namespace {

constexpr std::size_t alignment_bytes = 64;

std::size_t aligned(std::size_t bytes) {
  return (bytes + alignment_bytes - 1) / alignment_bytes * alignment_bytes;
}

// The caller's workspace is the only memory oneDNN may use beside the tensors.
dnnl::primitive_attr user_scratchpad_attr(float beta) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  if (beta != 0.0f) {
    dnnl::post_ops accumulate;
    accumulate.append_sum(beta);
    attr.set_post_ops(accumulate);
  }
  return attr;
}

dnnl::memory::desc argument_desc(const dnnl::primitive_desc& implementation, int argument) {
  return implementation.query_md(dnnl::query::exec_arg_md, argument);
}

}  // namespace

std::string implementation_name(const dnnl::primitive_desc& implementation,
                                const DirectionOperands& operands) {
  bool plain = true;
  bool blocked = false;
  for (const Operand* operand : {&operands.first_input, &operands.second_input, &operands.result}) {
    const dnnl::memory::desc used = argument_desc(implementation, operand->argument);
    plain = plain && used == operand->plain;
    blocked = blocked || used.data.format_desc.blocking.inner_nblks > 0;
  }
  const char* layout = plain ? "/plain" : blocked ? "/blocked" : "/reordered";
  return std::string(implementation.impl_info_str()) + layout;
}

std::shared_ptr<const ImplementationWalk> find_implementation(
    const ConvolutionProblem& problem, dnnl::algorithm kind, LayoutRequest layout,
    const dnnl::primitive_attr& attr, const std::string& name, const dnnl::engine& engine) {
  const DirectionOperands operands = direction_operands(problem);
  try {
    auto walk = std::make_shared<ImplementationWalk>(problem, kind, layout, attr, engine);
    do {
      if (implementation_name(walk->current(), operands) == name) return walk;
    } while (walk->next());
  } catch (const dnnl::error&) {
    // no implementation of this kind for the problem
  }
  return nullptr;
}

ConvolutionExecution::ConvolutionExecution(const ConvolutionProblem& problem, dnnl::algorithm kind,
                                           LayoutRequest layout, const std::string& name,
                                           float beta, const dnnl::engine& engine)
    : engine_(engine) {
  walk_ = find_implementation(problem, kind, layout, user_scratchpad_attr(0.0f), name, engine);
  if (!walk_) {
    throw std::invalid_argument("oneDNN has no convolution implementation '" + name + "' for " +
                                problem_key(problem));
  }
  implementation_ = walk_->current();
  const DirectionOperands operands = direction_operands(problem);
  // beta = 0 writes the caller's result directly when it is in the implementation's layout. A
  // forward convolution accumulates there too with a sum post-op when the implementation has one;
  // otherwise the result goes to a workspace buffer and a reorder with a sum post-op adds it.
  const bool result_plain =
      argument_desc(implementation_, operands.result.argument) == operands.result.plain;
  bool result_in_place = result_plain && beta == 0.0f;
  if (result_plain && beta != 0.0f && problem.direction == Direction::forward) {
    if (auto with_sum =
            find_implementation(problem, kind, layout, user_scratchpad_attr(beta), name, engine)) {
      walk_ = with_sum;
      implementation_ = walk_->current();
      result_in_place = true;
    }
  }
  first_input_ = stage_input(operands.first_input, implementation_);
  second_input_ = stage_input(operands.second_input, implementation_);
  result_ = stage_result(operands.result, implementation_, result_in_place, beta);

  // Reorders and the primitive run one after another, so they share one scratchpad.
  scratchpad_bytes_ = implementation_.scratchpad_desc().get_size();
  for (Staged* staged : {&first_input_, &second_input_, &result_}) {
    if (!staged->reordered) continue;
    scratchpad_bytes_ = std::max(scratchpad_bytes_, staged->reorder.scratchpad_desc().get_size());
  }
  std::size_t offset = aligned(scratchpad_bytes_);
  for (Staged* staged : {&first_input_, &second_input_, &result_}) {
    if (!staged->reordered) continue;
    staged->offset = offset;
    offset += aligned(staged->internal.get_size());
  }
  workspace_bytes_ = offset;
}

ConvolutionExecution::Staged ConvolutionExecution::stage_input(
    const Operand& operand, const dnnl::primitive_desc& implementation) const {
  Staged staged{.operand = operand, .internal = argument_desc(implementation, operand.argument)};
  staged.reordered = staged.internal != operand.plain;
  if (staged.reordered) {
    staged.reorder = dnnl::reorder::primitive_desc(engine_, operand.plain, engine_, staged.internal,
                                                   user_scratchpad_attr(0.0f));
  }
  return staged;
}

ConvolutionExecution::Staged ConvolutionExecution::stage_result(
    const Operand& operand, const dnnl::primitive_desc& implementation, bool in_place,
    float beta) const {
  Staged staged{.operand = operand, .internal = argument_desc(implementation, operand.argument)};
  staged.reordered = !in_place;
  if (staged.reordered) {
    staged.reorder = dnnl::reorder::primitive_desc(engine_, staged.internal, engine_, operand.plain,
                                                   user_scratchpad_attr(beta));
  }
  return staged;
}

void ConvolutionExecution::create_primitives() {
  if (compute_) return;
  compute_.emplace(implementation_);
  for (const Staged* staged : {&first_input_, &second_input_, &result_}) {
    reorders_.emplace_back(staged->reordered ? dnnl::reorder(staged->reorder) : dnnl::reorder());
  }
}

void ConvolutionExecution::run(const float* first_input, const float* second_input, float* result,
                               DeviceMemory* workspace, dnnl::stream& stream) {
  const std::size_t available = workspace ? workspace->bytes() : 0;
  if (available < workspace_bytes_) {
    throw std::invalid_argument("convolution workspace too small: the algorithm needs " +
                                format_bytes(static_cast<double>(workspace_bytes_)) + ", got " +
                                format_bytes(static_cast<double>(available)));
  }
  create_primitives();
  char* base = workspace ? reinterpret_cast<char*>(workspace->data()) : nullptr;
  auto with_scratchpad = [&](const dnnl::primitive_desc_base& descriptor,
                             std::unordered_map<int, dnnl::memory> arguments) {
    const dnnl::memory::desc scratchpad = descriptor.scratchpad_desc();
    if (scratchpad.get_size() > 0) {
      arguments.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(scratchpad, engine_, base));
    }
    return arguments;
  };
  // The tensor as the implementation sees it: the caller's memory, or its workspace copy.
  auto internal = [&](const Staged& staged, const void* user) {
    return dnnl::memory(staged.internal, engine_,
                        staged.reordered ? base + staged.offset : const_cast<void*>(user));
  };
  auto plain = [&](const Staged& staged, const void* user) {
    return dnnl::memory(staged.operand.plain, engine_, const_cast<void*>(user));
  };

  const Staged* inputs[] = {&first_input_, &second_input_};
  const void* input_pointers[] = {first_input, second_input};
  std::unordered_map<int, dnnl::memory> arguments;
  for (std::size_t index = 0; index < 2; ++index) {
    const Staged& staged = *inputs[index];
    dnnl::memory seen = internal(staged, input_pointers[index]);
    if (staged.reordered) {
      reorders_[index].execute(
          stream,
          with_scratchpad(staged.reorder, {{DNNL_ARG_FROM, plain(staged, input_pointers[index])},
                                           {DNNL_ARG_TO, seen}}));
    }
    arguments.emplace(staged.operand.argument, seen);
  }
  dnnl::memory computed = internal(result_, result);
  arguments.emplace(result_.operand.argument, computed);
  compute_->execute(stream, with_scratchpad(implementation_, arguments));
  if (result_.reordered) {
    reorders_[2].execute(stream,
                         with_scratchpad(result_.reorder, {{DNNL_ARG_FROM, computed},
                                                           {DNNL_ARG_TO, plain(result_, result)}}));
  }
  stream.wait();
}

}  // namespace tessera::kernels::onednn
