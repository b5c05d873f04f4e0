// ESIM's soft alignment (nn/ops/soft_align.hpp), the twin of cpu/soft_align_cpu.cpp: one thread per
// score, per row (softmaxes) or per output element, each a dot product in fp32; a thread finds its
// pair by binary search over the layout (a batch holds tens of pairs).
#include "nn/cuda/common.cuh"
#include "nn/cuda/kernels.hpp"
#include "nn/ops/soft_align.hpp"

namespace kglm::nn::cuda {

namespace {

// The last pair p whose layout[p, column] ≤ value.
__device__ inline int64_t find_pair(const int32_t* layout, int64_t pairs, int column, int64_t value) {
  int64_t lo = 0, hi = pairs - 1;
  while (lo < hi) {
    const int64_t mid = (lo + hi + 1) / 2;
    if (layout[4 * mid + column] <= value)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

struct PairAt {
  int64_t first, la, lb, offset;
};

__device__ inline PairAt pair_at(const int32_t* layout, int64_t p) {
  return {layout[4 * p], layout[4 * p + 1], layout[4 * p + 2], layout[4 * p + 3]};
}

// weights (or dweights) element e: the pair's row-softmax part [la, lb] holds e_ij (or dã_i · b_j),
// the second part [lb, la] e_ij at [j, i] (or db̃_j · a_i): left[u] · x[v].
template <class T>
__global__ void pair_dots_kernel(const T* left, const T* x, const int32_t* layout, T* out, int64_t pairs, int64_t d,
                                 int64_t w) {
  for (int64_t e = global_thread(); e < w; e += grid_threads()) {
    const PairAt q = pair_at(layout, find_pair(layout, pairs, 3, e));
    int64_t local = e - q.offset, u, v;
    if (local < q.la * q.lb) {
      u = q.first + local / q.lb, v = q.first + q.la + local % q.lb;  // (a_i, b_j)
    } else {
      local -= q.la * q.lb;
      u = q.first + q.la + local / q.la, v = q.first + local % q.la;  // (b_j, a_i)
    }
    float s = 0;
    for (int64_t c = 0; c < d; ++c) s += to_float(left[u * d + c]) * to_float(x[v * d + c]);
    out[e] = from_float<T>(s);
  }
}

// The weights' row of state row r: its start in the weights and its length.
__device__ inline void weight_row(const PairAt& q, int64_t r, int64_t& start, int64_t& n) {
  if (r < q.first + q.la) {
    start = q.offset + (r - q.first) * q.lb, n = q.lb;
  } else {
    start = q.offset + q.la * q.lb + (r - q.first - q.la) * q.la, n = q.la;
  }
}

template <class T>
__global__ void softmax_rows_kernel(const int32_t* layout, T* w, int64_t pairs, int64_t m) {
  for (int64_t r = global_thread(); r < m; r += grid_threads()) {
    int64_t start, n;
    weight_row(pair_at(layout, find_pair(layout, pairs, 0, r)), r, start, n);
    float top = to_float(w[start]);
    for (int64_t j = 1; j < n; ++j) top = fmaxf(top, to_float(w[start + j]));
    float sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += expf(to_float(w[start + j]) - top);
    for (int64_t j = 0; j < n; ++j) w[start + j] = from_float<T>(expf(to_float(w[start + j]) - top) / sum);
  }
}

// d ← w ⊙ (d − Σ w d) on each row.
template <class T>
__global__ void softmax_rows_backward_kernel(const int32_t* layout, const T* w, T* dw, int64_t pairs, int64_t m) {
  for (int64_t r = global_thread(); r < m; r += grid_threads()) {
    int64_t start, n;
    weight_row(pair_at(layout, find_pair(layout, pairs, 0, r)), r, start, n);
    float dot = 0;
    for (int64_t j = 0; j < n; ++j) dot += to_float(w[start + j]) * to_float(dw[start + j]);
    for (int64_t j = 0; j < n; ++j)
      dw[start + j] = from_float<T>(to_float(w[start + j]) * (to_float(dw[start + j]) - dot));
  }
}

// aligned[r, c] = Σ_k weights[row r, k] · x[other side's k, c].
template <class T>
__global__ void aligned_kernel(const T* x, const int32_t* layout, const T* w, T* aligned, int64_t pairs, int64_t m,
                               int64_t d) {
  for (int64_t e = global_thread(); e < m * d; e += grid_threads()) {
    const int64_t r = e / d, c = e % d;
    const PairAt q = pair_at(layout, find_pair(layout, pairs, 0, r));
    int64_t start, n;
    weight_row(q, r, start, n);
    const int64_t other = r < q.first + q.la ? q.first + q.la : q.first;
    float s = 0;
    for (int64_t k = 0; k < n; ++k) s += to_float(w[start + k]) * to_float(x[(other + k) * d + c]);
    aligned[e] = from_float<T>(s);
  }
}

// dx[r, c] for a row of a (i): Σ_j wb[j, i] db̃[j, c] + Σ_j (dea[i, j] + deb[j, i]) b[j, c]; for a
// row of b (j) the same with the roles swapped. dw holds the scores' gradients of both parts.
template <class T>
__global__ void dx_kernel(const T* daligned, const T* x, const int32_t* layout, const T* w, const T* dw, T* dx,
                          int64_t pairs, int64_t m, int64_t d) {
  for (int64_t e = global_thread(); e < m * d; e += grid_threads()) {
    const int64_t r = e / d, c = e % d;
    const PairAt q = pair_at(layout, find_pair(layout, pairs, 0, r));
    const int64_t second = q.offset + q.la * q.lb;
    float s = 0;
    if (r < q.first + q.la) {
      const int64_t i = r - q.first;
      for (int64_t j = 0; j < q.lb; ++j) {
        const int64_t row_b = q.first + q.la + j;
        s += to_float(w[second + j * q.la + i]) * to_float(daligned[row_b * d + c]);
        s += (to_float(dw[q.offset + i * q.lb + j]) + to_float(dw[second + j * q.la + i])) * to_float(x[row_b * d + c]);
      }
    } else {
      const int64_t j = r - q.first - q.la;
      for (int64_t i = 0; i < q.la; ++i) {
        const int64_t row_a = q.first + i;
        s += to_float(w[q.offset + i * q.lb + j]) * to_float(daligned[row_a * d + c]);
        s += (to_float(dw[q.offset + i * q.lb + j]) + to_float(dw[second + j * q.la + i])) * to_float(x[row_a * d + c]);
      }
    }
    dx[e] = from_float<T>(s);
  }
}

}  // namespace

template <class T>
void soft_align_forward(const T* x, const int32_t* layout, T* weights, T* aligned, int64_t pairs, int64_t m, int64_t d,
                        int64_t w) {
  launch_elementwise(pair_dots_kernel<native_t<T>>, "soft_align_forward", w, native(x), native(x), layout,
                     native(weights), pairs, d, w);
  launch_elementwise(softmax_rows_kernel<native_t<T>>, "soft_align_forward", m, layout, native(weights), pairs, m);
  launch_elementwise(aligned_kernel<native_t<T>>, "soft_align_forward", m * d, native(x), layout, native(weights),
                     native(aligned), pairs, m, d);
}

template <class T>
void soft_align_backward(const T* daligned, const T* x, const int32_t* layout, const T* weights, T* dweights, T* dx,
                         int64_t pairs, int64_t m, int64_t d, int64_t w) {
  launch_elementwise(pair_dots_kernel<native_t<T>>, "soft_align_backward", w, native(daligned), native(x), layout,
                     native(dweights), pairs, d, w);
  launch_elementwise(softmax_rows_backward_kernel<native_t<T>>, "soft_align_backward", m, layout, native(weights),
                     native(dweights), pairs, m);
  launch_elementwise(dx_kernel<native_t<T>>, "soft_align_backward", m * d, native(daligned), native(x), layout,
                     native(weights), native(dweights), native(dx), pairs, m, d);
}

#define KGLM_SOFT_ALIGN_CUDA(T)                                                                                \
  template void soft_align_forward<T>(const T*, const int32_t*, T*, T*, int64_t, int64_t, int64_t, int64_t);   \
  template void soft_align_backward<T>(const T*, const T*, const int32_t*, const T*, T*, T*, int64_t, int64_t, \
                                       int64_t, int64_t);
KGLM_FOR_STORAGE_TYPES(KGLM_SOFT_ALIGN_CUDA)
#undef KGLM_SOFT_ALIGN_CUDA

}  // namespace kglm::nn::cuda
