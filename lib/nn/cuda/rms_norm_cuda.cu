// T5's RMS norm over rows, the twin of cpu/rms_norm_cpu.cpp: one block per row, the mean square in
// fp32 whatever the storage type. dγ is the column sums of dy·x̂ by add_column_sums (fixed chunks of
// rows, added in order): deterministic, no atomics.
#include "nn/cuda/common.cuh"
#include "nn/cuda/kernels.hpp"

namespace kglm::nn::cuda {

namespace {

template <class T>
__global__ void rms_norm_forward_kernel(const T* x, const T* gamma, float eps, T* y, float* rstd, int64_t h) {
  __shared__ float scratch[32];
  const int64_t r = blockIdx.x;
  const T* xr = x + r * h;
  float squares = 0;
  for (int64_t j = threadIdx.x; j < h; j += blockDim.x) {
    const float v = to_float(xr[j]);
    squares += v * v;
  }
  const float k = rsqrtf(block_sum(squares, scratch) / static_cast<float>(h) + eps);
  if (threadIdx.x == 0) rstd[r] = k;
  T* yr = y + r * h;  // may be xr: each element is read before it is written, by the same thread
  for (int64_t j = threadIdx.x; j < h; j += blockDim.x) yr[j] = from_float<T>(to_float(xr[j]) * k * to_float(gamma[j]));
}

// dx = rstd · (g − x̂ · mean(g · x̂)) with g = dy · γ and x̂ = x · rstd.
template <class T>
__global__ void rms_norm_dx_kernel(const T* dy, const T* x, const T* gamma, const float* rstd, T* dx, int64_t h,
                                   bool accumulate) {
  __shared__ float scratch[32];
  const int64_t r = blockIdx.x;
  const T* dyr = dy + r * h;
  const T* xr = x + r * h;
  const float k = rstd[r];
  float sum_gx = 0;
  for (int64_t j = threadIdx.x; j < h; j += blockDim.x)
    sum_gx += to_float(dyr[j]) * to_float(gamma[j]) * (to_float(xr[j]) * k);
  const float mean_gx = block_sum(sum_gx, scratch) / static_cast<float>(h);
  T* dxr = dx + r * h;  // may be dyr (when overwritten): read before written, by the same thread
  for (int64_t j = threadIdx.x; j < h; j += blockDim.x) {
    const float v = k * (to_float(dyr[j]) * to_float(gamma[j]) - to_float(xr[j]) * k * mean_gx);
    dxr[j] = from_float<T>(accumulate ? to_float(dxr[j]) + v : v);
  }
}

// terms[r, j] = dy·x̂, whose column sums (add_column_sums: fixed row chunks, in order) are dγ.
template <class T>
__global__ void gamma_terms_kernel(const T* dy, const T* x, const float* rstd, int64_t h, int64_t total, float* terms) {
  for (int64_t i = global_thread(); i < total; i += grid_threads())
    terms[i] = to_float(dy[i]) * (to_float(x[i]) * rstd[i / h]);
}

}  // namespace

template <class T>
void rms_norm_forward(const T* x, const T* gamma, double eps, T* y, float* rstd, int64_t n, int64_t h) {
  if (n == 0) return;
  rms_norm_forward_kernel<<<static_cast<unsigned>(n), kThreads, 0, Context::get().stream()>>>(
      native(x), native(gamma), static_cast<float>(eps), native(y), rstd, h);
  check_launch("rms_norm_forward");
}

template <class T>
void rms_norm_backward(const T* dy, const T* x, const T* gamma, const float* rstd, T* dx, float* dgamma, int64_t n,
                       int64_t h, bool dx_accumulate) {
  constexpr std::string_view op = "rms_norm_backward";
  if (n == 0) return;
  Context& c = Context::get();
  // dγ's terms read dy before dx (which may alias it) is written.
  if (dgamma) {
    DeviceBuffer<float> terms(n * h);
    launch_elementwise(gamma_terms_kernel<native_t<T>>, op, n * h, native(dy), native(x), rstd, h, n * h, terms.get());
    add_column_sums<float>(terms.get(), n, h, dgamma);
  }
  rms_norm_dx_kernel<<<static_cast<unsigned>(n), kThreads, 0, c.stream()>>>(native(dy), native(x), native(gamma), rstd,
                                                                            native(dx), h, dx_accumulate);
  check_launch(op);
}

#define KGLM_RMS_NORM_CUDA(T)                                                                  \
  template void rms_norm_forward<T>(const T*, const T*, double, T*, float*, int64_t, int64_t); \
  template void rms_norm_backward<T>(const T*, const T*, const T*, const float*, T*, float*, int64_t, int64_t, bool);
KGLM_FOR_STORAGE_TYPES(KGLM_RMS_NORM_CUDA)
#undef KGLM_RMS_NORM_CUDA

}  // namespace kglm::nn::cuda
