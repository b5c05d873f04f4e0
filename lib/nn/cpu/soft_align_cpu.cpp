// ESIM's soft alignment (nn/ops/soft_align.hpp) on the CPU: per pair, one gemm for the scores, the
// two softmaxes, one gemm per side for the aligned vectors; the pairs spread over the threads, each
// output written by its own pair's work, so the result does not depend on the thread count.
#include <algorithm>
#include <cmath>

#include "nn/cpu/kernels.hpp"
#include "nn/ops/soft_align.hpp"

namespace kglm::nn::cpu {

namespace {

// Softmax of each of the `rows` rows of w [rows, n], in place.
template <class T>
void softmax_rows(T* w, int64_t rows, int64_t n) {
  for (int64_t i = 0; i < rows; ++i) {
    T* r = w + i * n;
    const T top = *std::max_element(r, r + n);
    T sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += (r[j] = std::exp(r[j] - top));
    for (int64_t j = 0; j < n; ++j) r[j] /= sum;
  }
}

// The softmax's backward pass in place on d: d ← w ⊙ (d − Σ_k w_k d_k), per row.
template <class T>
void softmax_rows_backward(const T* w, T* d, int64_t rows, int64_t n) {
  for (int64_t i = 0; i < rows; ++i) {
    const T* wr = w + i * n;
    T* dr = d + i * n;
    T dot = 0;
    for (int64_t j = 0; j < n; ++j) dot += wr[j] * dr[j];
    for (int64_t j = 0; j < n; ++j) dr[j] = wr[j] * (dr[j] - dot);
  }
}

struct Pair {
  int64_t first, la, lb, offset;
};

Pair pair_at(const int32_t* layout, int64_t p) {
  const int32_t* l = layout + 4 * p;
  return {l[0], l[1], l[2], l[3]};
}

}  // namespace

template <class T>
void soft_align_forward(const T* x, const int32_t* layout, T* weights, T* aligned, int64_t pairs, int64_t d) {
#pragma omp parallel for schedule(dynamic) if (pairs * d * 64 >= kParallelGrain)
  for (int64_t p = 0; p < pairs; ++p) {
    const Pair q = pair_at(layout, p);
    const T* a = x + q.first * d;
    const T* b = a + q.la * d;
    T* wa = weights + q.offset;  // [la, lb]
    T* wb = wa + q.la * q.lb;    // [lb, la]
    gemm<T>(false, true, q.la, q.lb, d, T(1), a, d, b, d, T(0), wa, q.lb);
    for (int64_t i = 0; i < q.la; ++i)
      for (int64_t j = 0; j < q.lb; ++j) wb[j * q.la + i] = wa[i * q.lb + j];
    softmax_rows(wa, q.la, q.lb);
    softmax_rows(wb, q.lb, q.la);
    gemm<T>(false, false, q.la, d, q.lb, T(1), wa, q.lb, b, d, T(0), aligned + q.first * d, d);
    gemm<T>(false, false, q.lb, d, q.la, T(1), wb, q.la, a, d, T(0), aligned + (q.first + q.la) * d, d);
  }
}

template <class T>
void soft_align_backward(const T* daligned, const T* x, const int32_t* layout, const T* weights, T* dweights, T* dx,
                         int64_t pairs, int64_t d) {
#pragma omp parallel for schedule(dynamic) if (pairs * d * 64 >= kParallelGrain)
  for (int64_t p = 0; p < pairs; ++p) {
    const Pair q = pair_at(layout, p);
    const T* a = x + q.first * d;
    const T* b = a + q.la * d;
    const T* da_al = daligned + q.first * d;  // dã
    const T* db_al = da_al + q.la * d;        // db̃
    const T* wa = weights + q.offset;
    const T* wb = wa + q.la * q.lb;
    T* dwa = dweights + q.offset;
    T* dwb = dwa + q.la * q.lb;
    T* dxa = dx + q.first * d;
    T* dxb = dxa + q.la * d;
    // Through the weighted sums: ã = wa · b, b̃ = wb · a.
    gemm<T>(false, true, q.la, q.lb, d, T(1), da_al, d, b, d, T(0), dwa, q.lb);
    gemm<T>(false, true, q.lb, q.la, d, T(1), db_al, d, a, d, T(0), dwb, q.la);
    gemm<T>(true, false, q.la, d, q.lb, T(1), wb, q.la, db_al, d, T(0), dxa, d);
    gemm<T>(true, false, q.lb, d, q.la, T(1), wa, q.lb, da_al, d, T(0), dxb, d);
    // Through the softmaxes to the scores e [la, lb] (the second softmax read eᵀ).
    softmax_rows_backward(wa, dwa, q.la, q.lb);
    softmax_rows_backward(wb, dwb, q.lb, q.la);
    for (int64_t i = 0; i < q.la; ++i)
      for (int64_t j = 0; j < q.lb; ++j) dwa[i * q.lb + j] += dwb[j * q.la + i];
    // e = a · bᵀ.
    gemm<T>(false, false, q.la, d, q.lb, T(1), dwa, q.lb, b, d, T(1), dxa, d);
    gemm<T>(true, false, q.lb, d, q.la, T(1), dwa, q.lb, a, d, T(1), dxb, d);
  }
}

template void soft_align_forward<float>(const float*, const int32_t*, float*, float*, int64_t, int64_t);
template void soft_align_forward<double>(const double*, const int32_t*, double*, double*, int64_t, int64_t);
template void soft_align_backward<float>(const float*, const float*, const int32_t*, const float*, float*, float*,
                                         int64_t, int64_t);
template void soft_align_backward<double>(const double*, const double*, const int32_t*, const double*, double*, double*,
                                          int64_t, int64_t);

}  // namespace kglm::nn::cpu
