#include "cpu/onednn_convolution_problem.hpp"

#include <algorithm>
#include <sstream>

namespace tessera::kernels::onednn {
namespace {

using dims = dnnl::memory::dims;

// A dense descriptor whose dimensions are `logical` and whose memory order is `logical` permuted
// by `physical_order` (outermost first): the caller's layouts are all of this kind.
dnnl::memory::desc dense_desc(const dims& logical, const std::vector<int>& physical_order) {
  dims strides(logical.size());
  dnnl::memory::dim stride = 1;
  for (auto axis = physical_order.rbegin(); axis != physical_order.rend(); ++axis) {
    strides[static_cast<std::size_t>(*axis)] = stride;
    stride *= logical[static_cast<std::size_t>(*axis)];
  }
  return dnnl::memory::desc(logical, dnnl::memory::data_type::f32, strides);
}

std::vector<int> identity_order(std::size_t rank) {
  std::vector<int> order(rank);
  for (std::size_t axis = 0; axis < rank; ++axis) order[axis] = static_cast<int>(axis);
  return order;
}

dnnl::memory::desc activation_desc(std::int64_t batch, std::int64_t channels,
                                   const std::vector<std::int64_t>& spatial) {
  dims logical{batch, channels};
  logical.insert(logical.end(), spatial.begin(), spatial.end());
  return dense_desc(logical, identity_order(logical.size()));
}

// oneDNN's weights are (G,) O, I, spatial with O the primitive's output channels. The caller's
// filter is out x in/groups x kernel for a convolution and in x out/groups x kernel for a
// transposed one (as in PyTorch), i.e. I before O in memory.
dnnl::memory::desc weights_desc(const ConvolutionGeometry& geometry) {
  const bool grouped = geometry.groups > 1;
  dims logical;
  if (grouped) logical.push_back(geometry.groups);
  logical.push_back(geometry.out_channels / geometry.groups);
  logical.push_back(geometry.in_channels / geometry.groups);
  logical.insert(logical.end(), geometry.kernel.begin(), geometry.kernel.end());
  std::vector<int> order = identity_order(logical.size());
  if (geometry.transposed) {
    const std::size_t out_axis = grouped ? 1 : 0;
    std::swap(order[out_axis], order[out_axis + 1]);
  }
  return dense_desc(logical, order);
}

dims minus_one(const std::vector<std::int64_t>& values) {
  dims result;
  for (std::int64_t value : values) result.push_back(value - 1);
  return result;
}

struct PlainDescs {
  dnnl::memory::desc source;       // x (forward input)
  dnnl::memory::desc weights;      // w
  dnnl::memory::desc destination;  // y (forward output)
};

PlainDescs plain_descs(const ConvolutionProblem& problem) {
  const ConvolutionGeometry& geometry = problem.geometry;
  return {activation_desc(problem.batch, geometry.in_channels, geometry.input_spatial),
          weights_desc(geometry),
          activation_desc(problem.batch, geometry.out_channels, geometry.output_spatial)};
}

dnnl::memory::desc any_like(const dnnl::memory::desc& desc) {
  return dnnl::memory::desc(desc.dims(), dnnl::memory::data_type::f32,
                            dnnl::memory::format_tag::any);
}

// The op descriptor of one direction; every convolution and deconvolution descriptor is a
// dnnl_convolution_desc_t underneath, which lets one primitive_desc type walk them all.
dnnl_convolution_desc_t op_desc(const ConvolutionGeometry& geometry, Direction direction,
                                dnnl::algorithm kind, const PlainDescs& descs) {
  const dims strides(geometry.stride.begin(), geometry.stride.end());
  const dims dilates = minus_one(geometry.dilation);  // oneDNN counts dilation from 0
  const dims padding(geometry.padding.begin(), geometry.padding.end());
  const auto& [x, w, y] = descs;
  const auto training = dnnl::prop_kind::forward_training;
  if (geometry.transposed) {
    switch (direction) {
      case Direction::forward:
        return dnnl::deconvolution_forward::desc(training, kind, x, w, y, strides, dilates, padding,
                                                 padding)
            .data;
      case Direction::backward_data:
        return dnnl::deconvolution_backward_data::desc(kind, x, w, y, strides, dilates, padding,
                                                       padding)
            .data;
      case Direction::backward_filter:
        return dnnl::deconvolution_backward_weights::desc(kind, x, w, y, strides, dilates, padding,
                                                          padding)
            .data;
    }
  }
  switch (direction) {
    case Direction::forward:
      return dnnl::convolution_forward::desc(training, kind, x, w, y, strides, dilates, padding,
                                             padding)
          .data;
    case Direction::backward_data:
      return dnnl::convolution_backward_data::desc(kind, x, w, y, strides, dilates, padding,
                                                   padding)
          .data;
    case Direction::backward_filter:
      return dnnl::convolution_backward_weights::desc(kind, x, w, y, strides, dilates, padding,
                                                      padding)
          .data;
  }
  throw std::logic_error("unknown convolution direction");
}

void append(std::ostringstream& out, const char* label, const std::vector<std::int64_t>& values) {
  out << ' ' << label;
  for (std::int64_t value : values) out << ',' << value;
}

}  // namespace

std::string problem_key(const ConvolutionProblem& problem) {
  const ConvolutionGeometry& geometry = problem.geometry;
  std::ostringstream out;
  out << to_string(problem.direction) << " n" << problem.batch << (geometry.transposed ? " t" : "")
      << " c" << geometry.in_channels << ',' << geometry.out_channels << ',' << geometry.groups;
  append(out, "i", geometry.input_spatial);
  append(out, "o", geometry.output_spatial);
  append(out, "k", geometry.kernel);
  append(out, "s", geometry.stride);
  append(out, "p", geometry.padding);
  append(out, "d", geometry.dilation);
  return out.str();
}

DirectionOperands direction_operands(const ConvolutionProblem& problem) {
  const PlainDescs descs = plain_descs(problem);
  switch (problem.direction) {
    case Direction::forward:
      return {{DNNL_ARG_SRC, descs.source},
              {DNNL_ARG_WEIGHTS, descs.weights},
              {DNNL_ARG_DST, descs.destination}};
    case Direction::backward_data:
      return {{DNNL_ARG_DIFF_DST, descs.destination},
              {DNNL_ARG_WEIGHTS, descs.weights},
              {DNNL_ARG_DIFF_SRC, descs.source}};
    case Direction::backward_filter:
      return {{DNNL_ARG_SRC, descs.source},
              {DNNL_ARG_DIFF_DST, descs.destination},
              {DNNL_ARG_DIFF_WEIGHTS, descs.weights}};
  }
  throw std::logic_error("unknown convolution direction");
}

std::vector<dnnl::algorithm> algorithm_kinds(bool transposed) {
  if (transposed)
    return {dnnl::algorithm::deconvolution_direct, dnnl::algorithm::deconvolution_winograd};
  return {dnnl::algorithm::convolution_direct, dnnl::algorithm::convolution_winograd,
          dnnl::algorithm::convolution_auto};
}

namespace {

PlainDescs requested_descs(const ConvolutionProblem& problem, LayoutRequest layout) {
  const PlainDescs plain = plain_descs(problem);
  if (layout == LayoutRequest::plain) return plain;
  return {any_like(plain.source), any_like(plain.weights), any_like(plain.destination)};
}

}  // namespace

ImplementationWalk::ImplementationWalk(const ConvolutionProblem& problem, dnnl::algorithm kind,
                                       LayoutRequest layout, const dnnl::primitive_attr& attr,
                                       const dnnl::engine& engine)
    : desc_(op_desc(problem.geometry, problem.direction, kind, requested_descs(problem, layout))),
      forward_desc_(
          op_desc(problem.geometry, Direction::forward, kind, requested_descs(problem, layout))),
      attr_(attr) {
  if (problem.direction == Direction::forward) {
    current_ = dnnl::primitive_desc(&desc_, &attr_, engine, nullptr);
    return;
  }
  // Backward primitives are chosen to match a forward one (its layouts in particular).
  hint_ = dnnl::primitive_desc(&forward_desc_, &hint_attr_, engine, nullptr);
  current_ = dnnl::primitive_desc(&desc_, &attr_, engine, hint_.get());
}

}  // namespace tessera::kernels::onednn
