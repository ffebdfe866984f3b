// Attention of a query sequence over a memory (layer.hpp's AttentionParams) on the device's
// attention kernels. Parameters in core's count: query weights, key weights, the score vector,
// and when normalised the score bias and the scalar gain. One backward kernel gives both input
// gradients and the weight gradients: it runs at the backward-data op (or at backward-filter
// where there is none).
#include <cmath>

#include "execution_context.hpp"
#include "sequence_executors.hpp"
#include "tessera/kernels/sequence_kernels.hpp"

namespace tessera::kernels::real {
namespace {

class Attention : public LayerExecutor {
 public:
  Attention(const ResolvedLayer& layer, const LocalShapes& shapes, ExecutionContext& context)
      : LayerExecutor(layer.layer.name), kernels_(sequence_kernels_for(layer.layer.name, context)) {
    const auto& p = std::get<AttentionParams>(layer.layer.params);
    const auto& query = layer.input_shapes.at(0);
    const auto& memory = layer.input_shapes.at(1);
    shape_ = {.batch = shapes.batch,
              .query_channels = query.c,
              .query_steps = query.spatial.at(0),
              .memory_channels = memory.c,
              .memory_steps = memory.spatial.at(0),
              .units = p.units,
              .normalize = p.normalize};
    workspace_ = context.device.allocate(
        static_cast<std::size_t>(kernels_.attention_workspace_floats(shape_)) * sizeof(float));
  }
  std::int64_t parameter_floats() const override {
    const std::int64_t u = shape_.units;
    return u * shape_.query_channels + u * shape_.memory_channels + u +
           (shape_.normalize ? u + 1 : 0);
  }
  void initialize(std::uint64_t seed, std::span<float> values) const override {
    // MLPerf GNMT's BahdanauAttention.reset_parameters: uniform within 0.1, the normalised
    // score's bias 0 and gain 1/sqrt(units).
    fill_uniform(seed, 0, 0.1F, values);
    if (!shape_.normalize) return;
    const auto bias = static_cast<std::size_t>(parameter_floats() - shape_.units - 1);
    for (std::size_t u = 0; u < static_cast<std::size_t>(shape_.units); ++u) values[bias + u] = 0;
    values.back() = static_cast<float>(1.0 / std::sqrt(static_cast<double>(shape_.units)));
  }
  void forward(StepPart) override {
    kernels_.attention_forward(shape_, t_.x[0], t_.x[1], weights(), t_.y, workspace_->data());
    backward_done_ = false;
  }
  void backward_data(StepPart) override { backward(t_.dx[0], t_.dx[1]); }
  void backward_filter() override {
    if (!backward_done_) backward(nullptr, nullptr);
  }

 private:
  template <typename T>
  struct Parts {
    T* query;
    T* key;
    T* score;
    T* bias;
    T* gain;
  };
  template <typename T>
  Parts<T> parts(T* base) const {
    const std::int64_t u = shape_.units;
    T* key = base + u * shape_.query_channels;
    T* score = key + u * shape_.memory_channels;
    T* bias = score + u;
    return {base, key, score, shape_.normalize ? bias : nullptr,
            shape_.normalize ? bias + u : nullptr};
  }
  AttentionWeights weights() const {
    const auto p = parts<const float>(weights_);
    return {p.query, p.key, p.score, p.bias, p.gain};
  }
  void backward(float* dquery, float* dmemory) {
    const auto p = parts<float>(gradients_);
    kernels_.attention_backward(shape_, t_.x[0], t_.x[1], weights(), workspace_->data(), t_.dy,
                                dquery, dmemory, {p.query, p.key, p.score, p.bias, p.gain});
    backward_done_ = true;
  }

  SequenceKernels& kernels_;
  AttentionShape shape_;
  std::unique_ptr<DeviceMemory> workspace_;
  bool backward_done_ = false;
};

}  // namespace

std::unique_ptr<LayerExecutor> make_attention_executor(const ResolvedLayer& layer,
                                                       const LocalShapes& shapes,
                                                       ExecutionContext& context) {
  return std::make_unique<Attention>(layer, shapes, context);
}

}  // namespace tessera::kernels::real
