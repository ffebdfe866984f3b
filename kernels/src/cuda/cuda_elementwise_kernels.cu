#include "counter_random.hpp"
#include "cuda/cuda_elementwise_kernels.hpp"
#include "cuda/cuda_for_each.cuh"

namespace tessera::kernels::cuda {
namespace {

struct Fill {
  float value;
  float* data;
  __device__ void operator()(std::int64_t i) const { data[i] = value; }
};

struct LeakyReluForward {
  float slope;
  const float* x;
  float* y;
  __device__ void operator()(std::int64_t i) const { y[i] = x[i] > 0.0f ? x[i] : slope * x[i]; }
};

struct LeakyReluBackward {
  float slope;
  const float* x;
  const float* dy;
  float* dx;
  __device__ void operator()(std::int64_t i) const { dx[i] = x[i] > 0.0f ? dy[i] : slope * dy[i]; }
};

// y = x Phi(x) = 0.5 x (1 + erf(x / sqrt 2)); dy/dx = Phi(x) + x phi(x). The tanh form replaces
// erf(x / sqrt 2) by tanh(u), u = sqrt(2/pi) (x + 0.044715 x^3), as PyTorch does.
constexpr float kSqrtHalf = 0.70710678118654752f;
constexpr float kInvSqrtTwoPi = 0.39894228040143268f;
constexpr float kSqrtTwoOverPi = 0.79788456080286536f;
constexpr float kTanhCubic = 0.044715f;

struct GeluForward {
  bool tanh_approximation;
  const float* x;
  float* y;
  __device__ void operator()(std::int64_t i) const {
    const float v = x[i];
    const float t = tanh_approximation ? tanhf(kSqrtTwoOverPi * (v + kTanhCubic * v * v * v))
                                       : erff(v * kSqrtHalf);
    y[i] = 0.5f * v * (1.0f + t);
  }
};

struct GeluBackward {
  bool tanh_approximation;
  const float* x;
  const float* dy;
  float* dx;
  __device__ void operator()(std::int64_t i) const {
    const float v = x[i];
    float derivative = 0.0f;
    if (tanh_approximation) {
      const float t = tanhf(kSqrtTwoOverPi * (v + kTanhCubic * v * v * v));
      const float du = kSqrtTwoOverPi * (1.0f + 3.0f * kTanhCubic * v * v);
      derivative = 0.5f * (1.0f + t) + 0.5f * v * (1.0f - t * t) * du;
    } else {
      derivative = 0.5f * (1.0f + erff(v * kSqrtHalf)) + v * kInvSqrtTwoPi * expf(-0.5f * v * v);
    }
    dx[i] = dy[i] * derivative;
  }
};

struct FillUniform {
  std::uint64_t seed;
  float* data;
  __device__ void operator()(std::int64_t i) const {
    data[i] = counter_uniform(seed, static_cast<std::uint64_t>(i));
  }
};

struct DropoutForward {
  std::uint64_t drop_below;  // of 2^24
  float kept_scale;
  std::uint64_t seed;
  std::uint64_t first_sample;
  std::int64_t per_sample;
  const float* x;
  float* mask;
  float* y;
  __device__ void operator()(std::int64_t i) const {
    const std::int64_t sample = i / per_sample;
    const std::uint64_t stream_seed =
        counter_stream_seed(seed, first_sample + static_cast<std::uint64_t>(sample));
    const std::uint64_t draw =
        counter_draw24(stream_seed, static_cast<std::uint64_t>(i - sample * per_sample));
    const float m = draw < drop_below ? 0.0f : kept_scale;
    mask[i] = m;
    y[i] = x[i] * m;
  }
};

struct Multiply {
  const float* a;
  const float* b;
  float* y;
  __device__ void operator()(std::int64_t i) const { y[i] = a[i] * b[i]; }
};

struct Add {
  const float* a;
  const float* b;
  float* y;
  __device__ void operator()(std::int64_t i) const { y[i] = a[i] + b[i]; }
};

struct SgdUpdate {
  float learning_rate;
  float momentum;
  float weight_decay;
  const float* g;
  float* w;
  float* velocity;
  __device__ void operator()(std::int64_t i) const {
    float step = g[i] + weight_decay * w[i];
    if (velocity != nullptr) {
      velocity[i] = momentum * velocity[i] + step;
      step = velocity[i];
    }
    w[i] -= learning_rate * step;
  }
};

struct AdamUpdate {
  float learning_rate;
  float beta1;
  float beta2;
  float epsilon;
  float bias_correction1;
  float bias_correction2;
  const float* g;
  float* w;
  float* m;
  float* v;
  __device__ void operator()(std::int64_t i) const {
    m[i] = beta1 * m[i] + (1.0f - beta1) * g[i];
    v[i] = beta2 * v[i] + (1.0f - beta2) * g[i] * g[i];
    w[i] -= learning_rate * (m[i] * bias_correction1) / (sqrtf(v[i] * bias_correction2) + epsilon);
  }
};

}  // namespace

void launch_fill(std::int64_t count, float value, float* data, cudaStream_t stream) {
  launch_for_each(count, Fill{value, data}, stream);
}

void launch_fill_uniform(std::int64_t count, std::uint64_t seed, float* data, cudaStream_t stream) {
  launch_for_each(count, FillUniform{seed, data}, stream);
}

void launch_leaky_relu_forward(std::int64_t count, float slope, const float* x, float* y,
                               cudaStream_t stream) {
  launch_for_each(count, LeakyReluForward{slope, x, y}, stream);
}

void launch_leaky_relu_backward(std::int64_t count, float slope, const float* x, const float* dy,
                                float* dx, cudaStream_t stream) {
  launch_for_each(count, LeakyReluBackward{slope, x, dy, dx}, stream);
}

void launch_gelu_forward(std::int64_t count, bool tanh_approximation, const float* x, float* y,
                         cudaStream_t stream) {
  launch_for_each(count, GeluForward{tanh_approximation, x, y}, stream);
}

void launch_gelu_backward(std::int64_t count, bool tanh_approximation, const float* x,
                          const float* dy, float* dx, cudaStream_t stream) {
  launch_for_each(count, GeluBackward{tanh_approximation, x, dy, dx}, stream);
}

void launch_dropout_forward(std::int64_t count, float drop_probability, const DropoutDraw& draw,
                            const float* x, float* mask, float* y, cudaStream_t stream) {
  // The top 24 bits of each draw against p * 2^24, exactly as the CPU kernels do, so both
  // devices draw the same mask from the same seed.
  const auto drop_below = static_cast<std::uint64_t>(static_cast<double>(drop_probability) *
                                                     static_cast<double>(1ull << 24));
  const float kept_scale = 1.0f / (1.0f - drop_probability);
  launch_for_each(count,
                  DropoutForward{drop_below, kept_scale, draw.seed, draw.first_sample,
                                 draw.per_sample, x, mask, y},
                  stream);
}

void launch_multiply(std::int64_t count, const float* a, const float* b, float* y,
                     cudaStream_t stream) {
  launch_for_each(count, Multiply{a, b, y}, stream);
}

void launch_add(std::int64_t count, const float* a, const float* b, float* y, cudaStream_t stream) {
  launch_for_each(count, Add{a, b, y}, stream);
}

void launch_sgd_update(std::int64_t count, float learning_rate, float momentum, float weight_decay,
                       const float* g, float* w, float* velocity, cudaStream_t stream) {
  launch_for_each(count, SgdUpdate{learning_rate, momentum, weight_decay, g, w, velocity}, stream);
}

void launch_adam_update(std::int64_t count, float learning_rate, float beta1, float beta2,
                        float epsilon, float bias_correction1, float bias_correction2,
                        const float* g, float* w, float* m, float* v, cudaStream_t stream) {
  launch_for_each(count,
                  AdamUpdate{learning_rate, beta1, beta2, epsilon, bias_correction1,
                             bias_correction2, g, w, m, v},
                  stream);
}

}  // namespace tessera::kernels::cuda
