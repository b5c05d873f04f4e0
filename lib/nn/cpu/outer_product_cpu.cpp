// Row-wise outer products (nn/ops/outer_product.hpp) on the CPU, one row per iteration.
#include "nn/cpu/kernels.hpp"

namespace kglm::nn::cpu {

template <class T>
void outer_product_forward(const T* a, const T* b, T* z, int64_t n, int64_t p, int64_t q) {
#pragma omp parallel for schedule(static) if (n * p * q >= kParallelGrain)
  for (int64_t r = 0; r < n; ++r)
    for (int64_t i = 0; i < p; ++i) {
      const T ai = a[r * p + i];
      T* zi = z + (r * p + i) * q;
#pragma omp simd
      for (int64_t j = 0; j < q; ++j) zi[j] = ai * b[r * q + j];
    }
}

template <class T>
void outer_product_backward(const T* dz, const T* a, const T* b, T* da, T* db, int64_t n, int64_t p, int64_t q) {
#pragma omp parallel for schedule(static) if (n * p * q >= kParallelGrain)
  for (int64_t r = 0; r < n; ++r) {
    T* dbr = db + r * q;
    for (int64_t j = 0; j < q; ++j) dbr[j] = T(0);
    for (int64_t i = 0; i < p; ++i) {
      const T* dzi = dz + (r * p + i) * q;
      const T ai = a[r * p + i];
      T sum = 0;
#pragma omp simd reduction(+ : sum)
      for (int64_t j = 0; j < q; ++j) {
        sum += dzi[j] * b[r * q + j];
        dbr[j] += dzi[j] * ai;
      }
      da[r * p + i] = sum;
    }
  }
}

template void outer_product_forward<float>(const float*, const float*, float*, int64_t, int64_t, int64_t);
template void outer_product_forward<double>(const double*, const double*, double*, int64_t, int64_t, int64_t);
template void outer_product_backward<float>(const float*, const float*, const float*, float*, float*, int64_t, int64_t,
                                            int64_t);
template void outer_product_backward<double>(const double*, const double*, const double*, double*, double*, int64_t,
                                             int64_t, int64_t);

}  // namespace kglm::nn::cpu
