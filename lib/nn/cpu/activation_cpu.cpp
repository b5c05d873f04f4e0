// GELU (exact, erf), tanh, ReLU and tanh-approximated GELU, elementwise. Outputs may alias inputs: element i is read,
// then written. The float GELU takes its erf eight at a time from glibc's vector math library (libmvec, glibc >= 2.35,
// reached through libm), the vector form of the std::erf it uses elsewhere; scalar std::erf is 10x slower and was the
// costliest op after the gemms.
#include <cmath>

#include "nn/cpu/kernels.hpp"

#if defined(__AVX2__) && defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#include <immintrin.h>
#define KGLM_LIBMVEC_ERF 1
extern "C" __m256 _ZGVdN8v_erff(__m256);  // erff on 8 lanes, AVX2 vector ABI
#endif

namespace kglm::nn::cpu {

namespace {

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
// Elements per block: the erf values of a block stay in L1 between the two loops.
constexpr int64_t kBlock = 512;

// out[i] = erf(x[i] / √2), i < n ≤ kBlock.
void erf_scaled(const float* x, float* out, int64_t n) {
  int64_t i = 0;
#ifdef KGLM_LIBMVEC_ERF
  const __m256 s = _mm256_set1_ps(static_cast<float>(kInvSqrt2));
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(out + i, _ZGVdN8v_erff(_mm256_mul_ps(_mm256_loadu_ps(x + i), s)));
#endif
  for (; i < n; ++i) out[i] = std::erf(x[i] * static_cast<float>(kInvSqrt2));
}

void erf_scaled(const double* x, double* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = std::erf(x[i] * kInvSqrt2);
}

}  // namespace

template <class T>
void gelu_forward(const T* x, T* y, int64_t n) {
  const int64_t blocks = (n + kBlock - 1) / kBlock;
#pragma omp parallel for schedule(static) if (n >= kParallelGrain)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t begin = blk * kBlock, len = std::min(kBlock, n - begin);
    T e[kBlock];
    erf_scaled(x + begin, e, len);
    const T* xb = x + begin;
    T* yb = y + begin;
#pragma omp simd
    for (int64_t i = 0; i < len; ++i) yb[i] = T(0.5) * xb[i] * (T(1) + e[i]);
  }
}

template <class T>
void gelu_backward(const T* dy, const T* x, T* dx, int64_t n) {
  // d/dx x·Φ(x) = Φ(x) + x·φ(x)
  const int64_t blocks = (n + kBlock - 1) / kBlock;
  const T inv_sqrt2pi = static_cast<T>(kInvSqrt2Pi);
#pragma omp parallel for schedule(static) if (n >= kParallelGrain)
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const int64_t begin = blk * kBlock, len = std::min(kBlock, n - begin);
    T e[kBlock];
    erf_scaled(x + begin, e, len);
    const T* xb = x + begin;
    const T* dyb = dy + begin;
    T* dxb = dx + begin;
#pragma omp simd
    for (int64_t i = 0; i < len; ++i) {
      const T v = xb[i];
      const T pdf = inv_sqrt2pi * exp_of<T>(T(-0.5) * v * v);
      dxb[i] = dyb[i] * (T(0.5) * (T(1) + e[i]) + v * pdf);
    }
  }
}

template <class T>
void tanh_forward(const T* x, T* y, int64_t n) {
#pragma omp parallel for schedule(static) if (n >= kParallelGrain)
  for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]);
}

template <class T>
void tanh_backward(const T* dy, const T* y, T* dx, int64_t n) {
#pragma omp parallel for simd schedule(static) if (n >= kParallelGrain)
  for (int64_t i = 0; i < n; ++i) dx[i] = dy[i] * (T(1) - y[i] * y[i]);
}

template <class T>
void relu_forward(const T* x, T* y, int64_t n) {
#pragma omp parallel for simd schedule(static) if (n >= kParallelGrain)
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] > T(0) ? x[i] : T(0);
}

template <class T>
void relu_backward(const T* dy, const T* y, T* dx, int64_t n) {
#pragma omp parallel for simd schedule(static) if (n >= kParallelGrain)
  for (int64_t i = 0; i < n; ++i) dx[i] = y[i] > T(0) ? dy[i] : T(0);
}

namespace {

constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kGeluCubic = 0.044715;

}  // namespace

template <class T>
void gelu_tanh_forward(const T* x, T* y, int64_t n) {
  const T c = static_cast<T>(kSqrt2OverPi), a = static_cast<T>(kGeluCubic);
#pragma omp parallel for schedule(static) if (n >= kParallelGrain)
  for (int64_t i = 0; i < n; ++i) {
    const T v = x[i];
    y[i] = T(0.5) * v * (T(1) + std::tanh(c * (v + a * v * v * v)));
  }
}

template <class T>
void gelu_tanh_backward(const T* dy, const T* x, T* dx, int64_t n) {
  // d/dx ½x(1 + t) = ½(1 + t) + ½x(1 − t²)·c(1 + 3a·x²), t = tanh(c(x + a·x³))
  const T c = static_cast<T>(kSqrt2OverPi), a = static_cast<T>(kGeluCubic);
#pragma omp parallel for schedule(static) if (n >= kParallelGrain)
  for (int64_t i = 0; i < n; ++i) {
    const T v = x[i];
    const T t = std::tanh(c * (v + a * v * v * v));
    dx[i] = dy[i] * (T(0.5) * (T(1) + t) + T(0.5) * v * (T(1) - t * t) * c * (T(1) + T(3) * a * v * v));
  }
}

#define KGLM_ACTIVATION_CPU(T)                                     \
  template void gelu_forward<T>(const T*, T*, int64_t);            \
  template void gelu_backward<T>(const T*, const T*, T*, int64_t); \
  template void tanh_forward<T>(const T*, T*, int64_t);            \
  template void tanh_backward<T>(const T*, const T*, T*, int64_t); \
  template void relu_forward<T>(const T*, T*, int64_t);            \
  template void relu_backward<T>(const T*, const T*, T*, int64_t); \
  template void gelu_tanh_forward<T>(const T*, T*, int64_t);       \
  template void gelu_tanh_backward<T>(const T*, const T*, T*, int64_t);
KGLM_ACTIVATION_CPU(float)
KGLM_ACTIVATION_CPU(double)
#undef KGLM_ACTIVATION_CPU

}  // namespace kglm::nn::cpu
