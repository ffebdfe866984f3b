#pragma once
// A convolution problem (geometry, batch, direction) in oneDNN's terms: the memory descriptors of
// the caller's plain tensors and the library's list of implementations for it.
#include <cstdint>
#include <string>
#include <vector>

#include <oneapi/dnnl/dnnl.hpp>

#include "tessera/kernels/convolution_kernels.hpp"

namespace tessera::kernels::onednn {

struct ConvolutionProblem {
  ConvolutionGeometry geometry;
  std::int64_t batch = 1;
  Direction direction = Direction::forward;
};

// A text key naming the problem exactly, for caches.
std::string problem_key(const ConvolutionProblem& problem);

// What a primitive is asked to run on: the caller's plain NC(D)HW tensors, or whatever layout
// oneDNN prefers (blocked or channels-last, reached through reorders).
enum class LayoutRequest { plain, library_choice };

// One tensor a direction reads or writes: its execution argument and the caller's plain layout.
struct Operand {
  int argument = 0;  // DNNL_ARG_*
  dnnl::memory::desc plain;
};

// The operands of a direction in the order ConvolutionKernels passes their pointers: two inputs,
// then the result (forward: x, w -> y; backward-data: dy, w -> dx; backward-filter: x, dy -> dw).
struct DirectionOperands {
  Operand first_input;
  Operand second_input;
  Operand result;
};
DirectionOperands direction_operands(const ConvolutionProblem& problem);

// convolution_direct, _winograd, _auto (or the deconvolution ones when transposed).
std::vector<dnnl::algorithm> algorithm_kinds(bool transposed);

// oneDNN's implementations of a problem for one algorithm kind and layout request, walked in
// oneDNN's order. oneDNN's iterator and backward descriptors point to the op descriptors, the
// attributes and the forward hint, so they live here, at a fixed address, as long as the walk
// or any descriptor taken from it is used.
class ImplementationWalk {
 public:
  // Stands at the first implementation; throws dnnl::error when there is none.
  ImplementationWalk(const ConvolutionProblem& problem, dnnl::algorithm kind, LayoutRequest layout,
                     const dnnl::primitive_attr& attr, const dnnl::engine& engine);
  ImplementationWalk(const ImplementationWalk&) = delete;
  ImplementationWalk& operator=(const ImplementationWalk&) = delete;

  const dnnl::primitive_desc& current() const { return current_; }
  // Moves to the next implementation; false (staying put) after the last.
  bool next() { return current_.next_impl(); }

 private:
  dnnl_convolution_desc_t desc_;
  dnnl_convolution_desc_t forward_desc_;
  dnnl::primitive_attr attr_;
  dnnl::primitive_attr hint_attr_;
  dnnl::primitive_desc hint_;
  dnnl::primitive_desc current_;
};

}  // namespace tessera::kernels::onednn
