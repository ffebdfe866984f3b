#pragma once
// One oneDNN convolution implementation ready to run a problem with a given beta: the primitive,
// the reorders between the caller's plain tensors and the implementation's layouts, and where each
// lives in the caller's workspace.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "cpu/onednn_convolution_problem.hpp"

namespace tessera::kernels {
class DeviceMemory;
}

namespace tessera::kernels::onednn {

// The stable name of the implementation a primitive descriptor stands at: oneDNN's
// impl_info_str() and the layout it runs on: "/plain" on the caller's NC(D)HW tensors,
// "/blocked" when some tensor is reordered to a blocked layout (e.g. nCdhw16c), "/reordered"
// when tensors are reordered to other dense layouts only (e.g. channels-last).
std::string implementation_name(const dnnl::primitive_desc& implementation,
                                const DirectionOperands& operands);

// Walks the implementations for (kind, layout) under `attr` to the one called `name`; null when
// there is none.
std::shared_ptr<const ImplementationWalk> find_implementation(
    const ConvolutionProblem& problem, dnnl::algorithm kind, LayoutRequest layout,
    const dnnl::primitive_attr& attr, const std::string& name, const dnnl::engine& engine);

class ConvolutionExecution {
 public:
  // Throws std::invalid_argument when oneDNN has no implementation `name` for (kind, layout).
  ConvolutionExecution(const ConvolutionProblem& problem, dnnl::algorithm kind,
                       LayoutRequest layout, const std::string& name, float beta,
                       const dnnl::engine& engine);

  // Scratchpad, reorder buffers and the accumulation buffer, each 64-byte aligned.
  std::size_t workspace_bytes() const { return workspace_bytes_; }

  // result = op(first_input, second_input) + beta * result, all in the caller's plain layouts.
  // Throws std::invalid_argument when `workspace` is smaller than workspace_bytes().
  void run(const float* first_input, const float* second_input, float* result,
           DeviceMemory* workspace, dnnl::stream& stream);

 private:
  struct Staged {  // a tensor the implementation wants in another layout
    Operand operand;
    dnnl::memory::desc internal;
    std::size_t offset = 0;  // into the workspace; meaningful when reordered
    bool reordered = false;
    dnnl::reorder::primitive_desc reorder;
  };
  Staged stage_input(const Operand& operand, const dnnl::primitive_desc& implementation) const;
  // In place: the implementation writes the caller's tensor; otherwise a workspace buffer that a
  // reorder adds to it (result = buffer + beta * result).
  Staged stage_result(const Operand& operand, const dnnl::primitive_desc& implementation,
                      bool in_place, float beta) const;
  void create_primitives();

  dnnl::engine engine_;
  std::shared_ptr<const ImplementationWalk> walk_;  // keeps implementation_'s references alive
  dnnl::primitive_desc implementation_;
  Staged first_input_;
  Staged second_input_;
  Staged result_;
  std::size_t scratchpad_bytes_ = 0;
  std::size_t workspace_bytes_ = 0;
  // Created on first use: enumerating algorithms builds executions only to size their workspace.
  std::optional<dnnl::primitive> compute_;
  std::vector<dnnl::reorder> reorders_;  // first input, second input, result (when staged)
};

}  // namespace tessera::kernels::onednn
