// Row-wise outer products (nn/ops/outer_product.hpp), the twin of cpu/outer_product_cpu.cpp: one
// thread per output element, in fp32.
#include "nn/cuda/common.cuh"
#include "nn/cuda/kernels.hpp"

namespace kglm::nn::cuda {

namespace {

template <class T>
__global__ void outer_product_forward_kernel(const T* a, const T* b, T* z, int64_t n, int64_t p, int64_t q) {
  for (int64_t e = global_thread(); e < n * p * q; e += grid_threads()) {
    const int64_t r = e / (p * q), i = (e / q) % p, j = e % q;
    z[e] = from_float<T>(to_float(a[r * p + i]) * to_float(b[r * q + j]));
  }
}

// One thread per element of da [n, p] and then of db [n, q].
template <class T>
__global__ void outer_product_backward_kernel(const T* dz, const T* a, const T* b, T* da, T* db, int64_t n, int64_t p,
                                              int64_t q) {
  for (int64_t e = global_thread(); e < n * (p + q); e += grid_threads()) {
    float s = 0;
    if (e < n * p) {
      const int64_t r = e / p, i = e % p;
      for (int64_t j = 0; j < q; ++j) s += to_float(dz[(r * p + i) * q + j]) * to_float(b[r * q + j]);
      da[e] = from_float<T>(s);
    } else {
      const int64_t f = e - n * p, r = f / q, j = f % q;
      for (int64_t i = 0; i < p; ++i) s += to_float(dz[(r * p + i) * q + j]) * to_float(a[r * p + i]);
      db[f] = from_float<T>(s);
    }
  }
}

}  // namespace

template <class T>
void outer_product_forward(const T* a, const T* b, T* z, int64_t n, int64_t p, int64_t q) {
  launch_elementwise(outer_product_forward_kernel<native_t<T>>, "outer_product_forward", n * p * q, native(a),
                     native(b), native(z), n, p, q);
}

template <class T>
void outer_product_backward(const T* dz, const T* a, const T* b, T* da, T* db, int64_t n, int64_t p, int64_t q) {
  launch_elementwise(outer_product_backward_kernel<native_t<T>>, "outer_product_backward", n * (p + q), native(dz),
                     native(a), native(b), native(da), native(db), n, p, q);
}

#define KGLM_OUTER_PRODUCT_CUDA(T)                                                           \
  template void outer_product_forward<T>(const T*, const T*, T*, int64_t, int64_t, int64_t); \
  template void outer_product_backward<T>(const T*, const T*, const T*, T*, T*, int64_t, int64_t, int64_t);
KGLM_FOR_STORAGE_TYPES(KGLM_OUTER_PRODUCT_CUDA)
#undef KGLM_OUTER_PRODUCT_CUDA

}  // namespace kglm::nn::cuda
