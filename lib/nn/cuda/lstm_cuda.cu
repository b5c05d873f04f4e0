// ELMo's projected LSTM (nn/ops/lstm.hpp), the twin of cpu/lstm_cpu.cpp: per step, the recurrent
// product (cuBLASLt, into fp32), one fused cell kernel, the projection product and its clip. The
// cell state and every gradient that crosses steps stay in fp32 whatever the storage type; the
// weight gradients are two products over all the steps at the end of the backward pass.
#include "nn/cuda/common.cuh"
#include "nn/cuda/gemm.hpp"
#include "nn/cuda/kernels.hpp"

namespace kglm::nn::cuda {

namespace {

__device__ inline float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }
__device__ inline float clip(float x, float limit) { return limit > 0 ? fminf(fmaxf(x, -limit), limit) : x; }
// TensorFlow's clip_by_value passes the gradient inside the closed interval.
__device__ inline float clip_gate(float x, float limit) { return limit > 0 && fabsf(x) > limit ? 0.0f : 1.0f; }

// One step's cell for the [b, d] elements: z = gates_x + recurrent (fp32), the activated gates,
// the raw cell and the memory written. c_prev is c0 (already clipped) at the first step, else the
// previous step's raw cell, clipped here.
template <class T>
__global__ void cell_forward_kernel(const T* gates_x, const float* recurrent, const float* c_prev, bool first,
                                    LstmShape s, T* gates, float* cell, T* memory) {
  const int64_t d = s.cell, n = s.streams * d;
  for (int64_t e = global_thread(); e < n; e += grid_threads()) {
    const int64_t r = e / d, k = e % d, base = r * 4 * d;
    const float i = sigmoid(to_float(gates_x[base + k]) + recurrent[base + k]);
    const float j = tanhf(to_float(gates_x[base + d + k]) + recurrent[base + d + k]);
    const float f = sigmoid(to_float(gates_x[base + 2 * d + k]) + recurrent[base + 2 * d + k] + s.forget_bias);
    const float o = sigmoid(to_float(gates_x[base + 3 * d + k]) + recurrent[base + 3 * d + k]);
    const float before = first ? c_prev[e] : clip(c_prev[e], s.cell_clip);
    const float raw = f * before + i * j;
    cell[e] = raw;
    memory[e] = from_float<T>(o * tanhf(clip(raw, s.cell_clip)));
    gates[base + k] = from_float<T>(i);
    gates[base + d + k] = from_float<T>(j);
    gates[base + 2 * d + k] = from_float<T>(f);
    gates[base + 3 * d + k] = from_float<T>(o);
  }
}

template <class T>
__global__ void clip_kernel(const T* x, float limit, int64_t n, T* y) {
  for (int64_t e = global_thread(); e < n; e += grid_threads()) y[e] = from_float<T>(clip(to_float(x[e]), limit));
}

__global__ void clip_float_kernel(const float* x, float limit, int64_t n, float* y) {
  for (int64_t e = global_thread(); e < n; e += grid_threads()) y[e] = clip(x[e], limit);
}

// dproj = (dh + dh_next) · clip gate of the projection.
template <class T>
__global__ void projection_grad_kernel(const T* dh, const float* dh_next, const T* projected, float limit, int64_t n,
                                       T* dproj) {
  for (int64_t e = global_thread(); e < n; e += grid_threads())
    dproj[e] = from_float<T>((to_float(dh[e]) + dh_next[e]) * clip_gate(to_float(projected[e]), limit));
}

// One step's cell backward: dz written, dc_next (the gradient of the clipped cell of this step on
// entry) replaced by that of the step before.
template <class T>
__global__ void cell_backward_kernel(const T* gates, const float* cell, const float* c_prev, bool first,
                                     const float* dm, LstmShape s, float* dc_next, T* dz) {
  const int64_t d = s.cell, n = s.streams * d;
  for (int64_t e = global_thread(); e < n; e += grid_threads()) {
    const int64_t r = e / d, k = e % d, base = r * 4 * d;
    const float i = to_float(gates[base + k]), j = to_float(gates[base + d + k]), f = to_float(gates[base + 2 * d + k]),
                o = to_float(gates[base + 3 * d + k]);
    const float tc = tanhf(clip(cell[e], s.cell_clip));
    const float dc_raw = (dc_next[e] + dm[e] * o * (1.0f - tc * tc)) * clip_gate(cell[e], s.cell_clip);
    const float before = first ? c_prev[e] : clip(c_prev[e], s.cell_clip);
    dz[base + k] = from_float<T>(dc_raw * j * i * (1.0f - i));
    dz[base + d + k] = from_float<T>(dc_raw * i * (1.0f - j * j));
    dz[base + 2 * d + k] = from_float<T>(dc_raw * before * f * (1.0f - f));
    dz[base + 3 * d + k] = from_float<T>(dm[e] * tc * o * (1.0f - o));
    dc_next[e] = dc_raw * f;
  }
}

}  // namespace

template <class T>
void lstm_forward(const T* gates_x, const T* w_h, const T* w_proj, const T* h0, const float* c0, const LstmShape& s,
                  T* h, T* gates, T* memory, T* projected, float* cell, float* c_last) {
  constexpr std::string_view op = "lstm_forward";
  const int64_t b = s.streams, d = s.cell, p = s.projection;
  DeviceBuffer<float> recurrent(b * 4 * d);
  for (int64_t t = 0; t < s.steps; ++t) {
    const int64_t row = t * b;
    const T* h_prev = t == 0 ? h0 : h + (row - b) * p;
    gemm<T, float>(op, false, true, b, 4 * d, p, 1.0f, h_prev, p, w_h, p, 0.0f, recurrent.get(), 4 * d);
    const float* c_prev = t == 0 ? c0 : cell + (row - b) * d;
    launch_elementwise(cell_forward_kernel<native_t<T>>, op, b * d, native(gates_x + row * 4 * d), recurrent.get(),
                       c_prev, t == 0, s, native(gates + row * 4 * d), cell + row * d, native(memory + row * d));
    gemm<T, T>(op, false, true, b, p, d, 1.0f, memory + row * d, d, w_proj, d, 0.0f, projected + row * p, p);
    launch_elementwise(clip_kernel<native_t<T>>, op, b * p, native(projected + row * p), s.proj_clip, b * p,
                       native(h + row * p));
  }
  launch_elementwise(clip_float_kernel, op, b * d, cell + (s.steps - 1) * b * d, s.cell_clip, b * d, c_last);
}

template <class T>
void lstm_backward(const T* dh, const T* w_h, const T* w_proj, const T* h0, const float* c0, const T* h, const T* gates,
                   const T* memory, const T* projected, const float* cell, const LstmShape& s, T* dgates_x, float* dw_h,
                   float* dw_proj) {
  constexpr std::string_view op = "lstm_backward";
  const int64_t b = s.streams, d = s.cell, p = s.projection, rows = s.steps * b;
  Context& c = Context::get();
  DeviceBuffer<T> dproj(rows * p);
  DeviceBuffer<float> dm(b * d), dh_next(b * p), dc_next(b * d);
  check(cudaMemsetAsync(dh_next.get(), 0, static_cast<size_t>(b * p) * sizeof(float), c.stream()), op,
        "cudaMemsetAsync");
  check(cudaMemsetAsync(dc_next.get(), 0, static_cast<size_t>(b * d) * sizeof(float), c.stream()), op,
        "cudaMemsetAsync");
  for (int64_t t = s.steps - 1; t >= 0; --t) {
    const int64_t row = t * b;
    T* dp = dproj.get() + row * p;
    launch_elementwise(projection_grad_kernel<native_t<T>>, op, b * p, native(dh + row * p), dh_next.get(),
                       native(projected + row * p), s.proj_clip, b * p, native(dp));
    gemm<T, float>(op, false, false, b, d, p, 1.0f, dp, p, w_proj, d, 0.0f, dm.get(), d);
    const float* c_prev = t == 0 ? c0 : cell + (row - b) * d;
    T* dz = dgates_x + row * 4 * d;
    launch_elementwise(cell_backward_kernel<native_t<T>>, op, b * d, native(gates + row * 4 * d), cell + row * d,
                       c_prev, t == 0, dm.get(), s, dc_next.get(), native(dz));
    if (t > 0) gemm<T, float>(op, false, false, b, p, 4 * d, 1.0f, dz, 4 * d, w_h, p, 0.0f, dh_next.get(), p);
  }
  gemm<T, float>(op, true, false, 4 * d, p, b, 1.0f, dgates_x, 4 * d, h0, p, 1.0f, dw_h, p);
  if (s.steps > 1)
    gemm<T, float>(op, true, false, 4 * d, p, rows - b, 1.0f, dgates_x + b * 4 * d, 4 * d, h, p, 1.0f, dw_h, p);
  gemm<T, float>(op, true, false, p, d, rows, 1.0f, dproj.get(), p, memory, d, 1.0f, dw_proj, d);
}

#define KGLM_LSTM_CUDA(T)                                                                                            \
  template void lstm_forward<T>(const T*, const T*, const T*, const T*, const float*, const LstmShape&, T*, T*, T*,  \
                                T*, float*, float*);                                                                 \
  template void lstm_backward<T>(const T*, const T*, const T*, const T*, const float*, const T*, const T*, const T*, \
                                 const T*, const float*, const LstmShape&, T*, float*, float*);
KGLM_FOR_STORAGE_TYPES(KGLM_LSTM_CUDA)
#undef KGLM_LSTM_CUDA

}  // namespace kglm::nn::cuda
