// ELMo's projected LSTM (nn/ops/lstm.hpp) on the CPU: per step, the recurrent product and the
// projection are OpenBLAS gemms split over the threads, and the cell is one vectorised loop over
// the [streams, cell] elements (exp_vec and tanh_vec: libm's are one call per element). The backward pass keeps each
// step's projection gradient and the memories, and does the two weight gradients as one gemm each over all the steps at
// the end.
#include <cmath>
#include <vector>

#include "nn/cpu/kernels.hpp"

namespace kglm::nn::cpu {

namespace {

// By value, not std::min/max: their references become selects of addresses, which stop GCC
// vectorising the cell loops.
template <class T>
T clip(T x, float limit) {
  const T l = T(limit);
  return limit > 0 ? (x < -l ? -l : (x > l ? l : x)) : x;
}

// The gradient through clip(x, ±limit): TensorFlow's clip_by_value passes it where x is inside
// the closed interval.
template <class T>
T clip_gate(T x, float limit) {
  return limit > 0 && std::abs(x) > T(limit) ? T(0) : T(1);
}

}  // namespace

template <class T>
void lstm_forward(const T* gates_x, const T* w_h, const T* w_proj, const T* h0, const T* c0, const LstmShape& s, T* h,
                  T* gates, T* memory, T* projected, T* cell, T* c_last) {
  const int64_t b = s.streams, d = s.cell, p = s.projection;
  const float cell_clip = s.cell_clip;  // locals: loads through `s` would block vectorisation
  const T forget_bias = T(s.forget_bias);
  check_blas_dims("lstm_forward", {b, 4 * d, p});
  for (int64_t t = 0; t < s.steps; ++t) {
    const int64_t row = t * b;
    T* z = gates + row * 4 * d;
    const T* h_prev = t == 0 ? h0 : h + (row - b) * p;
    std::copy(gates_x + row * 4 * d, gates_x + (row + b) * 4 * d, z);
    gemm_parallel(false, true, b, 4 * d, p, T(1), h_prev, p, w_h, p, T(1), z, 4 * d);
    const bool first = t == 0;
#pragma omp parallel for schedule(static) if (b * d >= kParallelGrain)
    for (int64_t r = 0; r < b; ++r) {
      T* zr = z + r * 4 * d;
      const T* c_prev = first ? c0 + r * d : cell + (row - b + r) * d;
      T* c_raw = cell + (row + r) * d;
      T* m = memory + (row + r) * d;
#pragma omp simd
      for (int64_t k = 0; k < d; ++k) {
        const T i = sigmoid_of(zr[k]), j = tanh_of(zr[d + k]), f = sigmoid_of(zr[2 * d + k] + forget_bias),
                o = sigmoid_of(zr[3 * d + k]);
        // The carried state is the clipped cell; the first step's c0 already is.
        const T before = first ? c_prev[k] : clip(c_prev[k], cell_clip);
        c_raw[k] = f * before + i * j;
        m[k] = o * tanh_of(clip(c_raw[k], cell_clip));
        zr[k] = i, zr[d + k] = j, zr[2 * d + k] = f, zr[3 * d + k] = o;
      }
    }
    T* proj = projected + row * p;
    gemm_parallel(false, true, b, p, d, T(1), memory + row * d, d, w_proj, d, T(0), proj, p);
    for (int64_t e = 0; e < b * p; ++e) h[row * p + e] = clip(proj[e], s.proj_clip);
  }
  const T* last = cell + (s.steps - 1) * b * d;
  for (int64_t e = 0; e < b * d; ++e) c_last[e] = clip(last[e], s.cell_clip);
}

template <class T>
void lstm_backward(const T* dh, const T* w_h, const T* w_proj, const T* h0, const T* c0, const T* h, const T* gates,
                   const T* memory, const T* projected, const T* cell, const LstmShape& s, T* dgates_x, T* dw_h,
                   T* dw_proj) {
  const int64_t b = s.streams, d = s.cell, p = s.projection, rows = s.steps * b;
  const float cell_clip = s.cell_clip;
  check_blas_dims("lstm_backward", {rows, 4 * d, p});
  // Scratch, allocated before any parallel region: the projection gradients of every step, the
  // memory gradient of one step, the recurrent h gradient and the running cell gradient.
  std::vector<T> dproj(static_cast<size_t>(rows * p)), dm(static_cast<size_t>(b * d)),
      dh_next(static_cast<size_t>(b * p), T(0)), dc_next(static_cast<size_t>(b * d), T(0));
  for (int64_t t = s.steps - 1; t >= 0; --t) {
    const int64_t row = t * b;
    T* dp = dproj.data() + row * p;
    for (int64_t e = 0; e < b * p; ++e)
      dp[e] = (dh[row * p + e] + dh_next[e]) * clip_gate(projected[row * p + e], s.proj_clip);
    gemm_parallel(false, false, b, d, p, T(1), dp, p, w_proj, d, T(0), dm.data(), d);
    const bool first = t == 0;
    T* dz = dgates_x + row * 4 * d;
#pragma omp parallel for schedule(static) if (b * d >= kParallelGrain)
    for (int64_t r = 0; r < b; ++r) {
      const T* g = gates + (row + r) * 4 * d;
      const T* c_raw = cell + (row + r) * d;
      const T* c_prev = first ? c0 + r * d : cell + (row - b + r) * d;
      T* dzr = dz + r * 4 * d;
      T* dc = dc_next.data() + r * d;
#pragma omp simd
      for (int64_t k = 0; k < d; ++k) {
        const T i = g[k], j = g[d + k], f = g[2 * d + k], o = g[3 * d + k];
        const T tc = tanh_of(clip(c_raw[k], cell_clip));
        const T dmk = dm[r * d + k];
        const T dc_raw = (dc[k] + dmk * o * (T(1) - tc * tc)) * clip_gate(c_raw[k], cell_clip);
        const T before = first ? c_prev[k] : clip(c_prev[k], cell_clip);
        dzr[k] = dc_raw * j * i * (T(1) - i);
        dzr[d + k] = dc_raw * i * (T(1) - j * j);
        dzr[2 * d + k] = dc_raw * before * f * (T(1) - f);
        dzr[3 * d + k] = dmk * tc * o * (T(1) - o);
        dc[k] = dc_raw * f;  // into c[t−1], which is the clipped cell: its clip gate is applied there
      }
    }
    if (t > 0) gemm_parallel(false, false, b, p, 4 * d, T(1), dz, 4 * d, w_h, p, T(0), dh_next.data(), p);
  }
  // dw_h += Σ_t dz[t]ᵀ · h[t−1] (h0 at t = 0); dw_proj += Σ_t dproj[t]ᵀ · m[t].
  gemm_parallel(true, false, 4 * d, p, b, T(1), dgates_x, 4 * d, h0, p, T(1), dw_h, p);
  if (s.steps > 1)
    gemm_parallel(true, false, 4 * d, p, rows - b, T(1), dgates_x + b * 4 * d, 4 * d, h, p, T(1), dw_h, p);
  gemm_parallel(true, false, p, d, rows, T(1), dproj.data(), p, memory, d, T(1), dw_proj, d);
}

#define KGLM_LSTM_CPU(T)                                                                                            \
  template void lstm_forward<T>(const T*, const T*, const T*, const T*, const T*, const LstmShape&, T*, T*, T*, T*, \
                                T*, T*);                                                                            \
  template void lstm_backward<T>(const T*, const T*, const T*, const T*, const T*, const T*, const T*, const T*,    \
                                 const T*, const T*, const LstmShape&, T*, T*, T*);
KGLM_LSTM_CPU(float)
KGLM_LSTM_CPU(double)

}  // namespace kglm::nn::cpu
