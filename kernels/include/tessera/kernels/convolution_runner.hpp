#pragma once
// Runs convolutions of any shape with one workspace grown to the largest need. By default each
// problem runs undivided with the first algorithm the device's library offers, which is what the
// library itself would pick (oneDNN's automatic implementation on its preferred layouts, cuDNN's
// first heuristic), or, under a workspace limit, the first that needs no more than the limit
// (the least needing one where none does). follow() gives one problem the plan the step program
// made for it from profiles (micro-batches and algorithms, named as the profile database names
// them): a layer's shard, or one window of a split layer's (window_kernel_plan.hpp), whose
// fallbacks the program has already decided. The runner decides nothing of its own.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "tessera/core/micro_batching/micro_batch_plan.hpp"
#include "tessera/kernels/convolution_kernels.hpp"

namespace tessera::kernels {

class Device;

// Convolution problems that ran the library's first choice instead of a plan from the profiles.
struct ConvolutionPlanCounts {
  std::size_t without_plan = 0;  // the program gave none (the profiles have no rows for them)
  std::size_t replaced = 0;      // the plan named an algorithm the device does not offer
  ConvolutionPlanCounts& operator+=(const ConvolutionPlanCounts& other) {
    without_plan += other.without_plan;
    replaced += other.replaced;
    return *this;
  }
};

// One workspace buffer grown to the largest request. Runners whose kernels never run at the same
// time (the layers of one rank) share one, as frameworks share one cuDNN workspace.
class ConvolutionWorkspace {
 public:
  explicit ConvolutionWorkspace(Device& device);
  ~ConvolutionWorkspace();
  // A buffer of at least `bytes` (nullptr for none), valid until the next larger request.
  DeviceMemory* at_least(double bytes);
  // The scenario's limit on a kernel's workspace (kernels.micro_batching.workspace_limit): the
  // buffer is allocated at that size now, as a pool the kernels share (what core's memory plan
  // counts), and the runners choose algorithms within it.
  void limit_to(double bytes);
  std::optional<double> limit_bytes() const { return limit_bytes_; }

 private:
  Device& device_;
  std::unique_ptr<DeviceMemory> memory_;
  std::optional<double> limit_bytes_;
};

class ConvolutionRunner {
 public:
  // Without a shared workspace the runner keeps its own.
  explicit ConvolutionRunner(Device& device, std::shared_ptr<ConvolutionWorkspace> workspace = {});
  ~ConvolutionRunner();

  // From now on, run this problem by `plan` (the step program's, from profiles), whose
  // micro-batches add up to `batch`. A device that does not offer its algorithms for it (a
  // profile of another device or library version) runs the library's first choice instead, and
  // replaced_plans() counts it. An empty plan restores the library's first choice.
  void follow(const ConvolutionGeometry& geometry, std::int64_t batch, Direction direction,
              MicroBatchPlan plan);

  void forward(const ConvolutionGeometry& geometry, std::int64_t batch, const float* x,
               const float* w, float* y, float beta);
  void backward_data(const ConvolutionGeometry& geometry, std::int64_t batch, const float* dy,
                     const float* w, float* dx, float beta);
  void backward_filter(const ConvolutionGeometry& geometry, std::int64_t batch, const float* x,
                       const float* dy, float* dw, float beta);

  // The problems run so far without a plan (on the library's first choice), one line each.
  std::vector<std::string> unplanned_problems() const;
  // The problems whose plan named an algorithm the device does not offer for it, and ran the
  // library's first choice instead.
  std::size_t replaced_plans() const { return replaced_.size(); }
  ConvolutionPlanCounts plan_counts() const {
    return {unplanned_problems().size(), replaced_plans()};
  }

  // How this problem runs (cached): the followed plan, or one micro-batch of the whole batch with
  // the library's first algorithm.
  const MicroBatchPlan& plan(const ConvolutionGeometry& geometry, std::int64_t batch,
                             Direction direction);

 private:
  struct Choice {
    MicroBatchPlan plan;
    double workspace_bytes = 0;
  };
  const Choice& choose(const ConvolutionGeometry& geometry, std::int64_t batch,
                       Direction direction);
  void run(const ConvolutionGeometry& geometry, std::int64_t batch, Direction direction,
           const float* first, const float* second, float* result, float beta);

  Device& device_;
  std::shared_ptr<ConvolutionWorkspace> workspace_;
  std::map<std::string, MicroBatchPlan> followed_;  // by problem; others: the first choice
  std::map<std::string, Choice> chosen_;
  std::set<std::string> replaced_;  // followed problems whose plan the device cannot run
};

}  // namespace tessera::kernels
