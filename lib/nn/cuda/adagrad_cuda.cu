// Adagrad step (nn/ops/adagrad.hpp), the twin of cpu/adagrad_cpu.cpp: one thread per element, in
// double as the CPU.
#include "nn/cuda/common.cuh"
#include "nn/cuda/kernels.hpp"

namespace kglm::nn::cuda {

namespace {

__global__ void adagrad_kernel(float* param, const float* grad, float* accum, int64_t n, double lr, double grad_scale) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) {
    const double g = static_cast<double>(grad[i]) * grad_scale;
    if (g == 0) continue;
    const double a = static_cast<double>(accum[i]) + g * g;
    accum[i] = static_cast<float>(a);
    param[i] = static_cast<float>(static_cast<double>(param[i]) - lr * g / sqrt(a));
  }
}

}  // namespace

void adagrad_update(float* param, const float* grad, float* accum, int64_t n, double lr, double grad_scale) {
  launch_elementwise(adagrad_kernel, "adagrad_update", n, param, grad, accum, n, lr, grad_scale);
}

}  // namespace kglm::nn::cuda
