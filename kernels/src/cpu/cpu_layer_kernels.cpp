#include "cpu/cpu_layer_kernels.hpp"

#include <stdexcept>

namespace tessera::kernels {

CpuLayerKernels::CpuLayerKernels() : engine_(dnnl::engine::kind::cpu, 0), stream_(engine_) {}

void CpuLayerKernels::pooling_forward(const PoolingGeometry& /*geometry*/, std::int64_t /*batch*/,
                                      const float* /*x*/, float* /*y*/) {
  throw std::logic_error("CpuLayerKernels::pooling_forward: not implemented yet");
}

void CpuLayerKernels::pooling_backward(const PoolingGeometry& /*geometry*/, std::int64_t /*batch*/,
                                       const float* /*x*/, const float* /*y*/, const float* /*dy*/,
                                       float* /*dx*/) {
  throw std::logic_error("CpuLayerKernels::pooling_backward: not implemented yet");
}

ChannelSums CpuLayerKernels::batch_norm_sums(std::int64_t /*batch*/, std::int64_t /*channels*/,
                                             std::int64_t /*spatial*/, const float* /*x*/) {
  throw std::logic_error("CpuLayerKernels::batch_norm_sums: not implemented yet");
}

void CpuLayerKernels::batch_norm_apply(std::int64_t /*batch*/, std::int64_t /*channels*/,
                                       std::int64_t /*spatial*/, const float* /*x*/,
                                       const std::vector<double>& /*mean*/,
                                       const std::vector<double>& /*inv_std*/,
                                       const float* /*scale*/, const float* /*shift*/,
                                       float* /*y*/) {
  throw std::logic_error("CpuLayerKernels::batch_norm_apply: not implemented yet");
}

ChannelSums CpuLayerKernels::batch_norm_backward_sums(std::int64_t /*batch*/,
                                                      std::int64_t /*channels*/,
                                                      std::int64_t /*spatial*/, const float* /*x*/,
                                                      const float* /*dy*/,
                                                      const std::vector<double>& /*mean*/,
                                                      const std::vector<double>& /*inv_std*/) {
  throw std::logic_error("CpuLayerKernels::batch_norm_backward_sums: not implemented yet");
}

void CpuLayerKernels::batch_norm_backward_apply(
    std::int64_t /*batch*/, std::int64_t /*channels*/, std::int64_t /*spatial*/, const float* /*x*/,
    const float* /*dy*/, const std::vector<double>& /*mean*/,
    const std::vector<double>& /*inv_std*/, const float* /*scale*/,
    const ChannelSums& /*group_sums*/, double /*group_count*/, float* /*dx*/, float* /*dscale*/,
    float* /*dshift*/) {
  throw std::logic_error("CpuLayerKernels::batch_norm_backward_apply: not implemented yet");
}

void CpuLayerKernels::leaky_relu_forward(std::int64_t /*count*/, float /*slope*/,
                                         const float* /*x*/, float* /*y*/) {
  throw std::logic_error("CpuLayerKernels::leaky_relu_forward: not implemented yet");
}

void CpuLayerKernels::leaky_relu_backward(std::int64_t /*count*/, float /*slope*/,
                                          const float* /*x*/, const float* /*dy*/, float* /*dx*/) {
  throw std::logic_error("CpuLayerKernels::leaky_relu_backward: not implemented yet");
}

void CpuLayerKernels::dropout_forward(std::int64_t /*count*/, float /*drop_probability*/,
                                      std::uint64_t /*seed*/, const float* /*x*/, float* /*mask*/,
                                      float* /*y*/) {
  throw std::logic_error("CpuLayerKernels::dropout_forward: not implemented yet");
}

void CpuLayerKernels::dropout_backward(std::int64_t /*count*/, const float* /*mask*/,
                                       const float* /*dy*/, float* /*dx*/) {
  throw std::logic_error("CpuLayerKernels::dropout_backward: not implemented yet");
}

void CpuLayerKernels::fully_connected_forward(std::int64_t /*batch*/, std::int64_t /*in*/,
                                              std::int64_t /*out*/, const float* /*x*/,
                                              const float* /*w*/, const float* /*b*/,
                                              float* /*y*/) {
  throw std::logic_error("CpuLayerKernels::fully_connected_forward: not implemented yet");
}

void CpuLayerKernels::fully_connected_backward_data(std::int64_t /*batch*/, std::int64_t /*in*/,
                                                    std::int64_t /*out*/, const float* /*dy*/,
                                                    const float* /*w*/, float* /*dx*/) {
  throw std::logic_error("CpuLayerKernels::fully_connected_backward_data: not implemented yet");
}

void CpuLayerKernels::fully_connected_backward_weights(std::int64_t /*batch*/, std::int64_t /*in*/,
                                                       std::int64_t /*out*/, const float* /*x*/,
                                                       const float* /*dy*/, float* /*dw*/,
                                                       float* /*db*/, float /*beta*/) {
  throw std::logic_error("CpuLayerKernels::fully_connected_backward_weights: not implemented yet");
}

void CpuLayerKernels::bias_forward(std::int64_t /*batch*/, std::int64_t /*channels*/,
                                   std::int64_t /*spatial*/, const float* /*b*/, float* /*y*/) {
  throw std::logic_error("CpuLayerKernels::bias_forward: not implemented yet");
}

void CpuLayerKernels::bias_backward(std::int64_t /*batch*/, std::int64_t /*channels*/,
                                    std::int64_t /*spatial*/, const float* /*dy*/, float* /*db*/,
                                    float /*beta*/) {
  throw std::logic_error("CpuLayerKernels::bias_backward: not implemented yet");
}

void CpuLayerKernels::concat_forward(std::int64_t /*batch*/, std::int64_t /*spatial*/,
                                     const std::vector<const float*>& /*inputs*/,
                                     const std::vector<std::int64_t>& /*channels*/, float* /*y*/) {
  throw std::logic_error("CpuLayerKernels::concat_forward: not implemented yet");
}

void CpuLayerKernels::concat_backward(std::int64_t /*batch*/, std::int64_t /*spatial*/,
                                      const float* /*dy*/,
                                      const std::vector<std::int64_t>& /*channels*/,
                                      const std::vector<float*>& /*dinputs*/) {
  throw std::logic_error("CpuLayerKernels::concat_backward: not implemented yet");
}

void CpuLayerKernels::add(std::int64_t /*count*/, const float* /*a*/, const float* /*b*/,
                          float* /*y*/) {
  throw std::logic_error("CpuLayerKernels::add: not implemented yet");
}

void CpuLayerKernels::axpy(std::int64_t /*count*/, float /*alpha*/, const float* /*x*/,
                           float* /*y*/) {
  throw std::logic_error("CpuLayerKernels::axpy: not implemented yet");
}

double CpuLayerKernels::softmax_cross_entropy(std::int64_t /*batch*/, std::int64_t /*classes*/,
                                              const float* /*logits*/,
                                              const std::vector<std::int32_t>& /*labels*/,
                                              float* /*dlogits*/) {
  throw std::logic_error("CpuLayerKernels::softmax_cross_entropy: not implemented yet");
}

double CpuLayerKernels::mse_loss(std::int64_t /*count*/, const float* /*prediction*/,
                                 const float* /*target*/, float* /*dprediction*/) {
  throw std::logic_error("CpuLayerKernels::mse_loss: not implemented yet");
}

void CpuLayerKernels::sgd_update(std::int64_t /*count*/, float /*learning_rate*/,
                                 float /*momentum*/, float /*weight_decay*/, const float* /*g*/,
                                 float* /*w*/, float* /*velocity*/) {
  throw std::logic_error("CpuLayerKernels::sgd_update: not implemented yet");
}

void CpuLayerKernels::adam_update(std::int64_t /*count*/, float /*learning_rate*/, float /*beta1*/,
                                  float /*beta2*/, float /*epsilon*/, std::int64_t /*step*/,
                                  const float* /*g*/, float* /*w*/, float* /*m*/, float* /*v*/) {
  throw std::logic_error("CpuLayerKernels::adam_update: not implemented yet");
}

}  // namespace tessera::kernels
