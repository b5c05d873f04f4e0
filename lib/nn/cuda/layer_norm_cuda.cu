// LayerNorm over rows: one block per row, statistics in fp32 whatever the storage type (two passes
// over the row, as the CPU's two-pass form). dγ and dβ are reduced over fixed chunks of rows and the
// chunk sums added in chunk order: deterministic, no atomics.
#include "nn/cuda/common.cuh"
#include "nn/cuda/kernels.hpp"

namespace kglm::nn::cuda {

namespace {

constexpr int kChunkRows = 64;  // rows per partial sum of dγ, dβ

template <class T>
__global__ void layer_norm_forward_kernel(const T* x, const T* residual, T* sum_out, const T* gamma, const T* beta,
                                          float eps, T* y, float* mean, float* rstd, int64_t h) {
  __shared__ float scratch[32];
  const int64_t r = blockIdx.x;
  const T* xr = x + r * h;
  float sum = 0;
  if (residual) {
    // The fused residual: the sum is stored in T and the statistics are of the stored values (the
    // backward reads them); later passes read the thread's own elements back.
    const T* rr = residual + r * h;
    T* sr = sum_out + r * h;
    for (int64_t j = threadIdx.x; j < h; j += blockDim.x) {
      const T s = from_float<T>(to_float(xr[j]) + to_float(rr[j]));
      sr[j] = s;
      sum += to_float(s);
    }
    xr = sr;
  } else {
    for (int64_t j = threadIdx.x; j < h; j += blockDim.x) sum += to_float(xr[j]);
  }
  const float mu = block_sum(sum, scratch) / static_cast<float>(h);
  float squares = 0;
  for (int64_t j = threadIdx.x; j < h; j += blockDim.x) {
    const float d = to_float(xr[j]) - mu;
    squares += d * d;
  }
  const float rs = rsqrtf(block_sum(squares, scratch) / static_cast<float>(h) + eps);
  if (threadIdx.x == 0) {
    mean[r] = mu;
    rstd[r] = rs;
  }
  T* yr = y + r * h;  // may be xr: each element is read before it is written, by the same thread
  for (int64_t j = threadIdx.x; j < h; j += blockDim.x)
    yr[j] = from_float<T>((to_float(xr[j]) - mu) * rs * to_float(gamma[j]) + to_float(beta[j]));
}

template <class T>
__global__ void layer_norm_dx_kernel(const T* dy, const T* x, const T* gamma, const float* mean, const float* rstd,
                                     T* dx, int64_t h, bool accumulate) {
  __shared__ float scratch[32];
  const int64_t r = blockIdx.x;
  const T* dyr = dy + r * h;
  const T* xr = x + r * h;
  const float m = mean[r], k = rstd[r];
  // dx = rstd · (g − mean(g) − x̂ · mean(g · x̂)) with g = dy · γ.
  float sum_g = 0, sum_gx = 0;
  for (int64_t j = threadIdx.x; j < h; j += blockDim.x) {
    const float g = to_float(dyr[j]) * to_float(gamma[j]);
    sum_g += g;
    sum_gx += g * ((to_float(xr[j]) - m) * k);
  }
  const float mean_g = block_sum(sum_g, scratch) / static_cast<float>(h);
  const float mean_gx = block_sum(sum_gx, scratch) / static_cast<float>(h);
  T* dxr = dx + r * h;  // may be dyr: read before written, by the same thread
  for (int64_t j = threadIdx.x; j < h; j += blockDim.x) {
    const float xhat = (to_float(xr[j]) - m) * k;
    const float v = k * (to_float(dyr[j]) * to_float(gamma[j]) - mean_g - xhat * mean_gx);
    dxr[j] = from_float<T>(accumulate ? to_float(dxr[j]) + v : v);
  }
}

// partial[chunk, 0:h] = Σ dy·x̂ and partial[chunk, h:2h] = Σ dy over the chunk's rows, one thread
// per column (coalesced across the warp), rows in order.
template <class T>
__global__ void layer_norm_param_partials_kernel(const T* dy, const T* x, const float* mean, const float* rstd,
                                                 int64_t n, int64_t h, float* partial) {
  const int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= h) return;
  const int64_t chunk = blockIdx.y, first = chunk * kChunkRows;
  const int64_t last = min(n, first + kChunkRows);
  float g = 0, b = 0;
  for (int64_t r = first; r < last; ++r) {
    const float d = to_float(dy[r * h + j]);
    g += d * ((to_float(x[r * h + j]) - mean[r]) * rstd[r]);
    b += d;
  }
  partial[chunk * 2 * h + j] = g;
  partial[chunk * 2 * h + h + j] = b;
}

__global__ void layer_norm_param_sum_kernel(const float* partial, int64_t chunks, int64_t h, float* dgamma,
                                            float* dbeta) {
  const int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= h) return;
  float g = 0, b = 0;
  for (int64_t c = 0; c < chunks; ++c) {
    g += partial[c * 2 * h + j];
    b += partial[c * 2 * h + h + j];
  }
  if (dgamma) dgamma[j] += g;
  if (dbeta) dbeta[j] += b;
}

}  // namespace

template <class T>
void layer_norm_forward(const T* x, const T* residual, T* sum, const T* gamma, const T* beta, double eps, T* y,
                        float* mean, float* rstd, int64_t n, int64_t h) {
  if (n == 0) return;
  layer_norm_forward_kernel<<<static_cast<unsigned>(n), kThreads, 0, Context::get().stream()>>>(
      native(x), native(residual), native(sum), native(gamma), native(beta), static_cast<float>(eps), native(y), mean,
      rstd, h);
  check_launch("layer_norm_forward");
}

template <class T>
void layer_norm_backward(const T* dy, const T* x, const T* gamma, const float* mean, const float* rstd, T* dx,
                         float* dgamma, float* dbeta, int64_t n, int64_t h, bool dx_accumulate) {
  constexpr std::string_view op = "layer_norm_backward";
  if (n == 0) return;
  Context& c = Context::get();
  // The parameter partials read dy before dx (which may alias it) is written.
  if (dgamma || dbeta) {
    const int64_t chunks = (n + kChunkRows - 1) / kChunkRows;
    DeviceBuffer<float> partial(chunks * 2 * h);
    const unsigned column_blocks = static_cast<unsigned>((h + kThreads - 1) / kThreads);
    layer_norm_param_partials_kernel<<<dim3(column_blocks, static_cast<unsigned>(chunks)), kThreads, 0, c.stream()>>>(
        native(dy), native(x), mean, rstd, n, h, partial.get());
    check_launch(op);
    layer_norm_param_sum_kernel<<<column_blocks, kThreads, 0, c.stream()>>>(partial.get(), chunks, h, dgamma, dbeta);
    check_launch(op);
  }
  if (dx) {
    layer_norm_dx_kernel<<<static_cast<unsigned>(n), kThreads, 0, c.stream()>>>(
        native(dy), native(x), native(gamma), mean, rstd, native(dx), h, dx_accumulate);
    check_launch(op);
  }
}

#define KGLM_LAYER_NORM_CUDA(T)                                                                                        \
  template void layer_norm_forward<T>(const T*, const T*, T*, const T*, const T*, double, T*, float*, float*, int64_t, \
                                      int64_t);                                                                        \
  template void layer_norm_backward<T>(const T*, const T*, const T*, const float*, const float*, T*, float*, float*,   \
                                       int64_t, int64_t, bool);
KGLM_FOR_STORAGE_TYPES(KGLM_LAYER_NORM_CUDA)
#undef KGLM_LAYER_NORM_CUDA

}  // namespace kglm::nn::cuda
