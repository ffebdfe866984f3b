#include "execution_context.hpp"

namespace tessera::kernels::real {
namespace {

class TimedHaloExchange : public HaloExchange {
 public:
  TimedHaloExchange(std::unique_ptr<HaloExchange> inner, CategoryTimes& times)
      : inner_(std::move(inner)), times_(times) {}
  Device& device() override { return inner_->device(); }
  const std::vector<std::int64_t>& local_shards() const override { return inner_->local_shards(); }
  void start(const WindowPlan& plan, int axis, HaloDirection direction, std::int64_t batch_channels,
             const std::vector<float*>& buffers) override {
    const auto begin = std::chrono::steady_clock::now();
    inner_->start(plan, axis, direction, batch_channels, buffers);
    times_.halo += seconds_since(begin);
  }
  void finish() override {
    const auto begin = std::chrono::steady_clock::now();
    inner_->finish();
    inner_->device().synchronize();
    times_.halo += seconds_since(begin);
  }
  void sum_over_shards(const std::vector<float*>& arrays, std::size_t floats) override {
    const auto begin = std::chrono::steady_clock::now();
    inner_->sum_over_shards(arrays, floats);
    inner_->device().synchronize();
    times_.allreduce += seconds_since(begin);
  }

 private:
  std::unique_ptr<HaloExchange> inner_;
  CategoryTimes& times_;
};

}  // namespace

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

ExecutionContext::ExecutionContext(Device& device_in, RankLayout& layout_in,
                                   std::vector<std::int64_t> grid)
    : device(device_in),
      layout(layout_in),
      spatial_grid(std::move(grid)),
      halo_exchange(timed_halo_exchange(
          communicator_halo_exchange(device_in, *layout_in.spatial_group), times)),
      convolution_workspace(std::make_shared<ConvolutionWorkspace>(device_in)) {}

void ExecutionContext::sum_over_spatial_group(std::vector<double>& values) {
  if (layout.shards == 1) return;
  const auto begin = std::chrono::steady_clock::now();
  layout.spatial_group->allreduce_sum(values.data(), values.size());
  times.other_communication += seconds_since(begin);
}

std::unique_ptr<HaloExchange> timed_halo_exchange(std::unique_ptr<HaloExchange> inner,
                                                  CategoryTimes& times) {
  return std::make_unique<TimedHaloExchange>(std::move(inner), times);
}

}  // namespace tessera::kernels::real
