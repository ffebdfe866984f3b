#include "cpu/onednn_convolutions.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>

namespace tessera::kernels::onednn {
namespace {

// Bad geometry gets a message saying what is wrong rather than oneDNN's "invalid arguments".
void check(const ConvolutionProblem& problem) {
  const ConvolutionGeometry& geometry = problem.geometry;
  const int rank = geometry.spatial_rank();
  if (rank < 1 || rank > 3) {
    throw std::invalid_argument("convolution needs 1 to 3 spatial axes, got " +
                                std::to_string(rank));
  }
  if (problem.batch < 1) throw std::invalid_argument("convolution batch must be at least 1");
  if (geometry.groups < 1 || geometry.in_channels % geometry.groups != 0 ||
      geometry.out_channels % geometry.groups != 0) {
    throw std::invalid_argument("convolution channels (" + std::to_string(geometry.in_channels) +
                                " in, " + std::to_string(geometry.out_channels) +
                                " out) must be multiples of its groups (" +
                                std::to_string(geometry.groups) + ")");
  }
  if (with_output(geometry).output_spatial != geometry.output_spatial) {
    throw std::invalid_argument(
        "convolution output_spatial does not match its input, kernel, stride, padding and "
        "dilation (use with_output())");
  }
}

}  // namespace

OnednnConvolutions::OnednnConvolutions(const dnnl::engine& engine, const dnnl::stream& stream)
    : engine_(engine), stream_(stream) {}

const std::vector<OnednnConvolutions::Candidate>& OnednnConvolutions::candidates(
    const ConvolutionProblem& problem) {
  const std::string key = problem_key(problem);
  if (auto known = candidates_.find(key); known != candidates_.end()) return known->second;
  check(problem);
  const DirectionOperands operands = direction_operands(problem);
  const dnnl::primitive_attr attr = [] {
    dnnl::primitive_attr user_scratchpad;
    user_scratchpad.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return user_scratchpad;
  }();
  std::vector<Candidate> found;
  for (dnnl::algorithm kind : algorithm_kinds(problem.geometry.transposed)) {
    for (LayoutRequest layout : {LayoutRequest::plain, LayoutRequest::library_choice}) {
      try {
        ImplementationWalk walk(problem, kind, layout, attr, engine_);
        do {
          std::string name = implementation_name(walk.current(), operands);
          // convolution_auto and the layout requests overlap with the others: keep the first.
          const bool seen = std::any_of(found.begin(), found.end(),
                                        [&](const Candidate& other) { return other.name == name; });
          if (!seen) found.push_back({std::move(name), kind, layout});
        } while (walk.next());
      } catch (const dnnl::error&) {
        // oneDNN has nothing of this kind for the problem (e.g. Winograd on a 3D convolution)
      }
    }
  }
  // oneDNN's own choice first (its automatic algorithm on the layouts it prefers), so that a
  // caller taking the first candidate runs what the library would run untold.
  try {
    const auto own_kind = problem.geometry.transposed ? dnnl::algorithm::deconvolution_direct
                                                      : dnnl::algorithm::convolution_auto;
    ImplementationWalk own(problem, own_kind, LayoutRequest::library_choice, attr, engine_);
    const std::string name = implementation_name(own.current(), operands);
    const auto at = std::find_if(found.begin(), found.end(),
                                 [&](const Candidate& each) { return each.name == name; });
    if (at != found.end()) std::rotate(found.begin(), at, at + 1);
  } catch (const dnnl::error&) {
    // no automatic choice for the problem: the walk's order stands
  }
  return candidates_.emplace(key, std::move(found)).first->second;
}

ConvolutionExecution& OnednnConvolutions::execution(const ConvolutionProblem& problem,
                                                    const std::string& algorithm, float beta) {
  const std::string key = problem_key(problem) + '|' + algorithm + '|' +
                          std::to_string(std::bit_cast<std::uint32_t>(beta));
  if (auto known = executions_.find(key); known != executions_.end()) return *known->second;
  const std::vector<Candidate>& offered = candidates(problem);
  auto candidate = std::find_if(offered.begin(), offered.end(),
                                [&](const Candidate& each) { return each.name == algorithm; });
  if (candidate == offered.end()) {
    std::string names;
    for (const Candidate& each : offered) names += (names.empty() ? "" : ", ") + each.name;
    throw std::invalid_argument("oneDNN offers no convolution algorithm '" + algorithm + "' for " +
                                problem_key(problem) + "; it offers: " + names);
  }
  auto created = std::make_unique<ConvolutionExecution>(problem, candidate->kind, candidate->layout,
                                                        algorithm, beta, engine_);
  return *executions_.emplace(key, std::move(created)).first->second;
}

// Every oneDNN CPU implementation is taken as deterministic: oneDNN documents run-to-run
// reproducibility on the CPU for the same thread count, which the real backend keeps fixed.
std::vector<ConvolutionAlgorithm> OnednnConvolutions::every_algorithm(
    const ConvolutionGeometry& geometry, std::int64_t batch, Direction direction) {
  const ConvolutionProblem problem{geometry, batch, direction};
  std::vector<ConvolutionAlgorithm> result;
  for (const Candidate& candidate : candidates(problem)) {
    // Accumulating (beta != 0) may need a buffer that overwriting does not, and a sum post-op
    // whose scale is not 1 may need more scratchpad (oneDNN's gemm convolution does): advertise
    // the most any beta needs, with 0.5 standing for every beta other than 0 and 1.
    std::size_t bytes = 0;
    for (float beta : {0.0f, 1.0f, 0.5f}) {
      bytes = std::max(bytes, execution(problem, candidate.name, beta).workspace_bytes());
    }
    result.push_back({candidate.name, static_cast<double>(bytes)});
  }
  return result;
}

void OnednnConvolutions::run(const ConvolutionProblem& problem, const std::string& algorithm,
                             const float* first_input, const float* second_input, float* result,
                             float beta, DeviceMemory* workspace) {
  execution(problem, algorithm, beta).run(first_input, second_input, result, workspace, stream_);
}

void OnednnConvolutions::forward(const ConvolutionGeometry& geometry, std::int64_t batch,
                                 const std::string& algorithm, const float* x, const float* w,
                                 float* y, float beta, DeviceMemory* workspace) {
  run({geometry, batch, Direction::forward}, algorithm, x, w, y, beta, workspace);
}

void OnednnConvolutions::backward_data(const ConvolutionGeometry& geometry, std::int64_t batch,
                                       const std::string& algorithm, const float* dy,
                                       const float* w, float* dx, float beta,
                                       DeviceMemory* workspace) {
  run({geometry, batch, Direction::backward_data}, algorithm, dy, w, dx, beta, workspace);
}

void OnednnConvolutions::backward_filter(const ConvolutionGeometry& geometry, std::int64_t batch,
                                         const std::string& algorithm, const float* x,
                                         const float* dy, float* dw, float beta,
                                         DeviceMemory* workspace) {
  run({geometry, batch, Direction::backward_filter}, algorithm, x, dy, dw, beta, workspace);
}

}  // namespace tessera::kernels::onednn
