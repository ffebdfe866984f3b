#include "execution_context.hpp"

namespace tessera::kernels::real {
namespace {

// The spatial group's halo exchange, recording every exchange it starts and finishes: whatever
// asks for one (the program's op, or a kernel on its own), the record shows it.
class RecordingHaloExchange : public HaloExchange {
 public:
  RecordingHaloExchange(std::unique_ptr<HaloExchange> inner, ExecutionContext& context)
      : inner_(std::move(inner)), context_(context) {}
  Device& device() override { return inner_->device(); }
  const std::vector<std::int64_t>& local_shards() const override { return inner_->local_shards(); }
  void start(const WindowPlan& plan, int axis, HaloDirection direction, std::int64_t batch_channels,
             const std::vector<float*>& buffers) override {
    context_.record({.kind = StepOpKind::halo_start,
                     .layer = context_.current_layer,
                     .direction = direction == HaloDirection::fill ? Direction::forward
                                                                   : Direction::backward_data,
                     .axis = axis});
    inner_->start(plan, axis, direction, batch_channels, buffers);
  }
  void finish() override {
    inner_->finish();
    inner_->device().synchronize();
    context_.record({.kind = StepOpKind::halo_wait, .layer = context_.current_layer});
  }
  void sum_over_shards(const std::vector<float*>& arrays, std::size_t floats) override {
    inner_->sum_over_shards(arrays, floats);
  }

 private:
  std::unique_ptr<HaloExchange> inner_;
  ExecutionContext& context_;
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
      halo_exchange(std::make_unique<RecordingHaloExchange>(
          communicator_halo_exchange(device_in, *layout_in.spatial_group), *this)),
      convolution_workspace(std::make_shared<ConvolutionWorkspace>(device_in)) {}

}  // namespace tessera::kernels::real
