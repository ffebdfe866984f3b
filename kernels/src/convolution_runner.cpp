#include "tessera/kernels/convolution_runner.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "tessera/kernels/device.hpp"
#include "tessera/kernels/micro_batched_convolution.hpp"

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

ConvolutionWorkspace::ConvolutionWorkspace(Device& device) : device_(device) {}
ConvolutionWorkspace::~ConvolutionWorkspace() = default;

DeviceMemory* ConvolutionWorkspace::at_least(double bytes) {
  if (bytes <= 0) return nullptr;
  const auto needed = static_cast<std::size_t>(std::ceil(bytes));
  if (!memory_ || memory_->bytes() < needed) {
    memory_.reset();  // first: the old and the new buffer need not fit together
    memory_ = device_.allocate(needed);
  }
  return memory_.get();
}

void ConvolutionWorkspace::limit_to(double bytes) {
  limit_bytes_ = std::max(0.0, bytes);
  at_least(*limit_bytes_);
}

ConvolutionRunner::ConvolutionRunner(Device& device,
                                     std::shared_ptr<ConvolutionWorkspace> workspace)
    : device_(device),
      workspace_(workspace ? std::move(workspace)
                           : std::make_shared<ConvolutionWorkspace>(device)) {}
ConvolutionRunner::~ConvolutionRunner() = default;

void ConvolutionRunner::follow(const ConvolutionGeometry& geometry, std::int64_t batch,
                               Direction direction, MicroBatchPlan plan) {
  const std::string key = problem_key(geometry, batch, direction);
  chosen_.erase(key);
  if (plan.micro_batches.empty()) {
    followed_.erase(key);
    return;
  }
  if (plan.samples() != batch) {
    throw std::invalid_argument("micro-batch plan '" + describe(plan) + "' covers " +
                                std::to_string(plan.samples()) + " samples, the problem " +
                                std::to_string(batch));
  }
  followed_[key] = std::move(plan);
}

const ConvolutionRunner::Choice& ConvolutionRunner::choose(const ConvolutionGeometry& geometry,
                                                           std::int64_t batch,
                                                           Direction direction) {
  const std::string key = problem_key(geometry, batch, direction);
  auto found = chosen_.find(key);
  if (found != chosen_.end()) return found->second;
  auto& kernels = device_.convolutions();
  if (auto followed = followed_.find(key); followed != followed_.end()) {
    try {
      const double bytes =
          micro_batched_workspace_bytes(kernels, geometry, direction, followed->second);
      return chosen_.emplace(key, Choice{followed->second, bytes}).first->second;
    } catch (const std::invalid_argument&) {
      // The user's real.deterministic overrides the plan: the first deterministic algorithm
      // runs. Otherwise the plan came from a profile of another device or library version.
      if (!kernels.deterministic_only()) replaced_.insert(key);
    }
  }
  const auto offered = kernels.algorithms(geometry, batch, direction);
  if (offered.empty()) {
    throw std::runtime_error(device_.info().name + " offers no convolution algorithm for " + key);
  }
  auto pick = offered.begin();
  if (const auto limit = workspace_->limit_bytes()) {
    auto within = std::find_if(offered.begin(), offered.end(), [&](const auto& algorithm) {
      return algorithm.workspace_bytes <= *limit;
    });
    pick = within != offered.end()
               ? within
               : std::min_element(offered.begin(), offered.end(), [](const auto& a, const auto& b) {
                   return a.workspace_bytes < b.workspace_bytes;
                 });
  }
  Choice first{{{{batch, pick->name, 0, pick->workspace_bytes}}}, pick->workspace_bytes};
  return chosen_.emplace(key, std::move(first)).first->second;
}

std::vector<std::string> ConvolutionRunner::unplanned_problems() const {
  std::vector<std::string> unplanned;
  for (const auto& [key, choice] : chosen_) {
    if (!followed_.contains(key)) unplanned.push_back(key);
  }
  return unplanned;
}

const MicroBatchPlan& ConvolutionRunner::plan(const ConvolutionGeometry& geometry,
                                              std::int64_t batch, Direction direction) {
  return choose(geometry, batch, direction).plan;
}

void ConvolutionRunner::run(const ConvolutionGeometry& geometry, std::int64_t batch,
                            Direction direction, const float* first, const float* second,
                            float* result, float beta) {
  const Choice& choice = choose(geometry, batch, direction);
  run_micro_batched(device_.convolutions(), geometry, direction, choice.plan, first, second, result,
                    beta, workspace_->at_least(choice.workspace_bytes));
}

void ConvolutionRunner::forward(const ConvolutionGeometry& geometry, std::int64_t batch,
                                const float* x, const float* w, float* y, float beta) {
  run(geometry, batch, Direction::forward, x, w, y, beta);
}

void ConvolutionRunner::backward_data(const ConvolutionGeometry& geometry, std::int64_t batch,
                                      const float* dy, const float* w, float* dx, float beta) {
  run(geometry, batch, Direction::backward_data, dy, w, dx, beta);
}

void ConvolutionRunner::backward_filter(const ConvolutionGeometry& geometry, std::int64_t batch,
                                        const float* x, const float* dy, float* dw, float beta) {
  run(geometry, batch, Direction::backward_filter, x, dy, dw, beta);
}

}  // namespace tessera::kernels
