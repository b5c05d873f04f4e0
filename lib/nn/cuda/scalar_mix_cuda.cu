// The scalar mix (nn/ops/scalar_mix.hpp), the twin of cpu/scalar_mix_cpu.cpp: the coefficients
// travel by value in the launch; the dot products sum a fixed grid per layer in double, the block
// sums then added in order on the host, so the result depends on the sizes only.
#include <vector>

#include "nn/cuda/common.cuh"
#include "nn/cuda/kernels.hpp"
#include "nn/ops/scalar_mix.hpp"

namespace kglm::nn::cuda {

namespace {

constexpr int kDotBlocks = 256;

struct Coefficients {
  float c[kMaxMixedLayers];
};

template <class T>
__global__ void scalar_mix_forward_kernel(const T* x, Coefficients k, T* y, int64_t layers, int64_t n) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) {
    float s = 0;
    for (int64_t j = 0; j < layers; ++j) s += k.c[j] * to_float(x[j * n + i]);
    y[i] = from_float<T>(s);
  }
}

template <class T>
__global__ void scalar_mix_dots_kernel(const T* dy, const T* x, int64_t n, double* partial) {
  __shared__ double scratch[32];
  const T* xj = x + static_cast<int64_t>(blockIdx.y) * n;
  double s = 0;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    s += static_cast<double>(to_float(dy[i])) * to_float(xj[i]);
  s = block_sum(s, scratch);
  if (threadIdx.x == 0) partial[blockIdx.y * gridDim.x + blockIdx.x] = s;
}

}  // namespace

template <class T>
void scalar_mix_forward(const T* x, const float* coefficients, T* y, int64_t layers, int64_t n) {
  Coefficients k{};
  for (int64_t j = 0; j < layers; ++j) k.c[j] = coefficients[j];
  launch_elementwise(scalar_mix_forward_kernel<native_t<T>>, "scalar_mix_forward", n, native(x), k, native(y), layers,
                     n);
}

template <class T>
void scalar_mix_dots(const T* dy, const T* x, int64_t layers, int64_t n, double* dots) {
  constexpr std::string_view op = "scalar_mix_dots";
  DeviceBuffer<double> partial(kDotBlocks * layers);
  const dim3 grid(kDotBlocks, static_cast<unsigned>(layers));
  scalar_mix_dots_kernel<<<grid, kThreads, 0, Context::get().stream()>>>(native(dy), native(x), n, partial.get());
  check_launch(op);
  std::vector<double> host(static_cast<size_t>(kDotBlocks * layers));
  read_back(partial.get(), host.data(), kDotBlocks * layers, op);
  for (int64_t j = 0; j < layers; ++j) {
    double s = 0;
    for (int b = 0; b < kDotBlocks; ++b) s += host[static_cast<size_t>(j * kDotBlocks + b)];
    dots[j] = s;
  }
}

#define KGLM_SCALAR_MIX_CUDA(T)                                                      \
  template void scalar_mix_forward<T>(const T*, const float*, T*, int64_t, int64_t); \
  template void scalar_mix_dots<T>(const T*, const T*, int64_t, int64_t, double*);
KGLM_FOR_STORAGE_TYPES(KGLM_SCALAR_MIX_CUDA)
#undef KGLM_SCALAR_MIX_CUDA

}  // namespace kglm::nn::cuda
