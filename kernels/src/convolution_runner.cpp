#include "tessera/kernels/convolution_runner.hpp"

#include <cmath>
#include <stdexcept>

#include "tessera/kernels/device.hpp"

namespace tessera::kernels {
namespace {

std::string problem_key(const ConvolutionGeometry& g, std::int64_t batch, Direction direction) {
  std::string key = std::to_string(static_cast<int>(direction)) + (g.transposed ? "t" : "c") +
                    std::to_string(batch) + "/" + std::to_string(g.in_channels) + "/" +
                    std::to_string(g.out_channels) + "/" + std::to_string(g.groups);
  for (const auto* values :
       {&g.input_spatial, &g.output_spatial, &g.kernel, &g.stride, &g.padding, &g.dilation}) {
    key += "|";
    for (std::int64_t value : *values) key += std::to_string(value) + ",";
  }
  return key;
}

}  // namespace

ConvolutionRunner::ConvolutionRunner(Device& device) : device_(device) {}
ConvolutionRunner::~ConvolutionRunner() = default;

const ConvolutionAlgorithm& ConvolutionRunner::algorithm(const ConvolutionGeometry& geometry,
                                                         std::int64_t batch, Direction direction) {
  const std::string key = problem_key(geometry, batch, direction);
  auto found = chosen_.find(key);
  if (found == chosen_.end()) {
    const auto offered = device_.convolutions().algorithms(geometry, batch, direction);
    if (offered.empty()) {
      throw std::runtime_error(device_.info().name + " offers no convolution algorithm for " + key);
    }
    found = chosen_.emplace(key, offered.front()).first;
  }
  return found->second;
}

DeviceMemory* ConvolutionRunner::workspace_for(double bytes) {
  if (bytes <= 0) return nullptr;
  const auto needed = static_cast<std::size_t>(std::ceil(bytes));
  if (!workspace_ || workspace_->bytes() < needed) {
    workspace_.reset();
    workspace_ = device_.allocate(needed);
  }
  return workspace_.get();
}

void ConvolutionRunner::forward(const ConvolutionGeometry& geometry, std::int64_t batch,
                                const float* x, const float* w, float* y, float beta) {
  const auto& chosen = algorithm(geometry, batch, Direction::forward);
  device_.convolutions().forward(geometry, batch, chosen.name, x, w, y, beta,
                                 workspace_for(chosen.workspace_bytes));
}

void ConvolutionRunner::backward_data(const ConvolutionGeometry& geometry, std::int64_t batch,
                                      const float* dy, const float* w, float* dx, float beta) {
  const auto& chosen = algorithm(geometry, batch, Direction::backward_data);
  device_.convolutions().backward_data(geometry, batch, chosen.name, dy, w, dx, beta,
                                       workspace_for(chosen.workspace_bytes));
}

void ConvolutionRunner::backward_filter(const ConvolutionGeometry& geometry, std::int64_t batch,
                                        const float* x, const float* dy, float* dw, float beta) {
  const auto& chosen = algorithm(geometry, batch, Direction::backward_filter);
  device_.convolutions().backward_filter(geometry, batch, chosen.name, x, dy, dw, beta,
                                         workspace_for(chosen.workspace_bytes));
}

}  // namespace tessera::kernels
