// CPU kernels of the ops (private to lib/nn). Each works on raw, contiguous, row-major arrays and
// is templated on the scalar, instantiated for float (training) and double (finite-difference
// checks). The dispatch files (nn/ops/*.cpp) have checked shapes, dtypes, devices and aliasing;
// a kernel checks only what needs the data (ids and targets in range), before writing anything.
//
// Threading: one pool, OpenMP's, with omp_get_max_threads() threads.
//  - OpenBLAS is pinned to one thread (blas_single_thread(), called before the first gemm), oneDNN's
//    sgemm runs on the calling thread (linear_cpu.cpp), and we split each gemm's output rows over
//    the OpenMP threads ourselves. Debian's default OpenBLAS is
//    the pthread build: its own pool would compete with OpenMP's (both spin-wait after a call, so
//    each steals the 2 cores from the other), and calling it from inside an OpenMP region
//    (attention runs one gemm per (batch, head) in a parallel loop) would oversubscribe. With the
//    OpenMP build of OpenBLAS the same code is right too (inside a parallel region it runs serially).
//  - Loops use static schedules (attention hands out its (batch, head) pairs dynamically: their
//    costs differ with padding, and each is computed whole by one thread). Every reduction is
//    ordered independently of the thread count: split over columns (embedding/scatter backward,
//    linear db), or over fixed-size row blocks whose partials are combined in block order
//    (layer_norm dγ/dβ, sum_of_squares), or per row then summed serially (cross-entropy). Results
//    are therefore bit-identical for any thread count, except the gemms of linear: oneDNN and
//    OpenBLAS may pick another kernel (small-matrix, edge) for another row split, so the last bits
//    of y, dx and dw can change with the thread count (never between runs at the same count).
//  - Small ops stay on the calling thread: a parallel region costs a few microseconds.
//  - Nothing inside a parallel region throws (an exception may not leave one): kernels check
//    their data and allocate their scratch before they start the threads.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <type_traits>
#include <utility>

#include <omp.h>

#include "nn/ops/adamw.hpp"
#include "nn/ops/attention.hpp"
#include "nn/ops/biased_attention.hpp"
#include "nn/ops/char_convolution.hpp"
#include "nn/ops/cross_entropy.hpp"
#include "nn/ops/dropout.hpp"
#include "nn/ops/lstm.hpp"
#include "nn/ops/sampled_softmax.hpp"

namespace kglm::nn::cpu {

// Elementwise loops below this many elements run on one thread.
inline constexpr int64_t kParallelGrain = 1 << 14;

// Part `part` of [0, n) cut into `parts` contiguous pieces whose bounds are multiples of `align`
// (except n): {begin, end}.
inline std::pair<int64_t, int64_t> split_range(int64_t n, int parts, int part, int64_t align = 1) {
  const int64_t units = (n + align - 1) / align;
  const int64_t base = units / parts, extra = units % parts;
  const int64_t first = part * base + std::min<int64_t>(part, extra);
  const int64_t count = base + (part < extra ? 1 : 0);
  return {std::min(n, first * align), std::min(n, (first + count) * align)};
}

// Runs fn(begin, end) on contiguous blocks of [0, n) (bounds multiples of `align`), one block per
// OpenMP thread, or fn(0, n) on the calling thread when `parallel` is false. Not for use inside a
// parallel region; fn must not throw.
template <class F>
void for_blocks(int64_t n, bool parallel, int64_t align, F&& fn) {
  if (!parallel || omp_get_max_threads() == 1 || n <= align) {
    fn(int64_t{0}, n);
    return;
  }
#pragma omp parallel
  {
    const auto [begin, end] = split_range(n, omp_get_num_threads(), omp_get_thread_num(), align);
    if (begin < end) fn(begin, end);
  }
}

// e^x for float in plain arithmetic that GCC vectorises in `#pragma omp simd` loops (glibc's expf
// is one call per element): x = n·ln2 + r, |r| ≤ ln2/2, Cephes' degree-6 polynomial for e^r, then
// 2^n in the exponent bits.
// Within 1 ulp of e^x for x in [−87, 88.37]; exactly 0 below −87 (so lowest() and −inf give 0, as
// softmax masking needs); saturates at e^88.37 above (the kernels only pass x ≤ 0).
inline float exp_vec(float x) {
  const float c = std::min(std::max(x, -87.0f), 88.37f);
  // Round to nearest through the 1.5·2²³ shifter (GCC does not vectorise std::floor here).
  const float n = (c * 1.44269504088896341f + 12582912.0f) - 12582912.0f;  // in [−126, 127]
  const float r = (c - n * 0.693359375f) + n * 2.12194440e-4f;             // ln2 split in two
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const float e = p * std::bit_cast<float>((static_cast<int32_t>(n) + 127) << 23);
  return x < -87.0f ? 0.0f : e;
}
// The exponential the kernels use: exp_vec for float, std::exp for double (the finite-difference
// checks want full precision).
template <class T>
T exp_of(T x) {
  if constexpr (std::is_same_v<T, float>) {
    return exp_vec(x);
  } else {
    return std::exp(x);
  }
}

// tanh for float, vectorisable like exp_vec: Cephes' odd polynomial below |x| = 0.625 (where
// 1 − 2/(e^2x + 1) would lose the leading bits), that formula above; within 2 ulp. std::tanh for
// double.
inline float tanh_vec(float x) {
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * x + x;
  const float large = 1.0f - 2.0f / (exp_vec(2.0f * std::min(std::abs(x), 44.0f)) + 1.0f);
  return std::abs(x) < 0.625f ? small : std::copysign(large, x);
}
template <class T>
T tanh_of(T x) {
  if constexpr (std::is_same_v<T, float>) {
    return tanh_vec(x);
  } else {
    return std::tanh(x);
  }
}
template <class T>
T sigmoid_of(T x) {
  return T(1) / (T(1) + exp_of(-x));
}

// --- gemm (linear_cpu.cpp) -------------------------------------------------------------------
// Pins OpenBLAS to one thread (once per process; see above).
void blas_single_thread();
// Throws kglm::Error naming `op` when a gemm dimension does not fit OpenBLAS's 32-bit int; the
// kernels check before they call gemm, which does not throw (it may run in a parallel region).
void check_blas_dims(std::string_view op, std::initializer_list<int64_t> dims);
// Row-major C[m, n] = alpha · op(A) · op(B) + beta · C on the calling thread; op(X) = Xᵀ when
// trans_x. Calls blas_single_thread() first.
template <class T>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda, const T* b,
          int64_t ldb, T beta, T* c, int64_t ldc);
// The same with C's rows split over the OpenMP threads (not inside a parallel region).
template <class T>
void gemm_parallel(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a, int64_t lda,
                   const T* b, int64_t ldb, T beta, T* c, int64_t ldc);

// --- gemm_bf16_cpu.cpp: the products of --precision bf16 (nn/cpu_precision.hpp) ----------------
// The same product with op(A) and op(B) rounded to bfloat16 and fp32 accumulation, on oneDNN (its
// own threads at the top level, the calling thread inside a parallel region). false where it does
// not apply — a product whose operands' rounding would cost more than bf16 saves (a short side, as
// attention's per-head products), k = 0, oneDNN unable to set it up — and C is untouched:
// the caller runs sgemm. Never throws. gemm and gemm_parallel call it when the CPU's gemm dtype is
// BF16.
bool gemm_bf16(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc) noexcept;
// The parameters [begin, begin + count) of a model that only predicts will not change until the next
// freeze_weights or thaw_weights of that buffer (ParameterStore calls them: refresh_compute after
// loading, and its destructor): a weight among them is rounded to bf16 at its first product and the
// copy kept, where every product would round it again (bf16 inference: ~11% of an encoder's time).
void freeze_weights(const float* begin, int64_t count);
void thaw_weights(const float* begin) noexcept;
// linear_forward's product y = x · wᵀ + beta · y in bf16 with w's kept copy: false (y untouched)
// where w is not a frozen weight or bf16 does not gain.
bool linear_bf16_frozen(const float* x, const float* w, float beta, float* y, int64_t n, int64_t in,
                        int64_t out) noexcept;

// --- linear_cpu.cpp: x [n, in], w [out, in], b [out] or null, y [n, out] ------------------------
template <class T>
void linear_forward(const T* x, const T* w, const T* b, T* y, int64_t n, int64_t in, int64_t out);
// dx (or null) written or accumulated; dw and db (or null) accumulated.
template <class T>
void linear_backward(const T* dy, const T* x, const T* w, T* dx, T* dw, T* db, int64_t n, int64_t in, int64_t out,
                     bool dx_accumulate);

// --- embedding_cpu.cpp: row gather and scatter-add (embedding and gather/scatter_add_rows) --------
// out[i] (=|+=) src[index[i]], i < m; src has n rows of h. Throws (naming `op` and the index
// argument `arg`) on an index outside [0, n) before writing.
template <class T>
void gather_rows(std::string_view op, std::string_view arg, const int32_t* index, int64_t m, const T* src, int64_t n,
                 int64_t h, T* out, bool accumulate);
// dsrc[index[i]] += dout[i], i < m, in the order of i for every element (deterministic).
template <class T>
void scatter_add_rows(std::string_view op, std::string_view arg, const int32_t* index, int64_t m, const T* dout,
                      int64_t n, int64_t h, T* dsrc);

// --- layer_norm_cpu.cpp: x [n, h] ---------------------------------------------------------------
// With residual (else null): the LayerNorm of x + residual, that sum written to `sum` (may be x).
template <class T>
void layer_norm_forward(const T* x, const T* residual, T* sum, const T* gamma, const T* beta, double eps, T* y, T* mean,
                        T* rstd, int64_t n, int64_t h);
template <class T>
void layer_norm_backward(const T* dy, const T* x, const T* gamma, const T* mean, const T* rstd, T* dx, T* dgamma,
                         T* dbeta, int64_t n, int64_t h, bool dx_accumulate);

// --- activation_cpu.cpp: n elements; outputs may alias inputs ---------------------------------
template <class T>
void gelu_forward(const T* x, T* y, int64_t n);
template <class T>
void gelu_backward(const T* dy, const T* x, T* dx, int64_t n);
template <class T>
void tanh_forward(const T* x, T* y, int64_t n);
template <class T>
void tanh_backward(const T* dy, const T* y, T* dx, int64_t n);
template <class T>
void relu_forward(const T* x, T* y, int64_t n);
template <class T>
void relu_backward(const T* dy, const T* y, T* dx, int64_t n);
template <class T>
void gelu_tanh_forward(const T* x, T* y, int64_t n);
template <class T>
void gelu_tanh_backward(const T* dy, const T* x, T* dx, int64_t n);

// --- rms_norm_cpu.cpp: x [n, h]; dx written or accumulated, dgamma (or null) accumulated -------
template <class T>
void rms_norm_forward(const T* x, const T* gamma, double eps, T* y, T* rstd, int64_t n, int64_t h);
template <class T>
void rms_norm_backward(const T* dy, const T* x, const T* gamma, const T* rstd, T* dx, T* dgamma, int64_t n, int64_t h,
                       bool dx_accumulate);

// --- biased_attention_cpu.cpp (see nn/ops/biased_attention.hpp) ------------------------------
// bias [heads, bias_queries, bias_keys] or null; drop_mask null when p == 0.
template <class T>
void biased_attention_forward(const T* q, const T* k, const T* v, const T* bias, int64_t bias_queries,
                              int64_t bias_keys, const AttentionPairs& pairs, const BiasedAttentionShape& s, float p,
                              const DropoutKey& key, T* ctx, T* probs, uint8_t* drop_mask);
// dscores may be null.
template <class T>
void biased_attention_backward(const T* dctx, const T* q, const T* k, const T* v, const T* probs,
                               const uint8_t* drop_mask, const AttentionPairs& pairs, const BiasedAttentionShape& s,
                               float p, T* dq, T* dk, T* dv, T* dscores);
// Throws on a bucket outside [0, buckets).
template <class T>
void relative_bias_forward(const int32_t* buckets_of, const T* table, int64_t buckets, int64_t heads, int64_t tq,
                           int64_t tk, T* bias);
// buckets_of [·, bias_keys], checked by the caller.
template <class T>
void relative_bias_backward(const T* dscores, const AttentionPairs& pairs, const int32_t* buckets_of, int64_t bias_keys,
                            int64_t heads, T* dtable);

// --- dropout_cpu.cpp ----------------------------------------------------------------------------
// Element i is kept when its Philox word is ≥ this (= ⌈p·2³²⌉, exact in double).
uint64_t dropout_threshold(float p);
// mask[j] = keep(first + j), j < n (also used by attention on its probabilities).
void dropout_mask(const DropoutKey& key, float p, uint64_t first, int64_t n, uint8_t* mask);
// mask may be null when p == 0.
template <class T>
void dropout_forward(const T* x, float p, const DropoutKey& key, T* y, uint8_t* mask, int64_t n);
// Row r's elements are numbers numbers[r] · width + j of the key's stream.
template <class T>
void dropout_rows_forward(const T* x, float p, const DropoutKey& key, const int64_t* numbers, T* y, uint8_t* mask,
                          int64_t rows, int64_t width);
template <class T>
void dropout_backward(const T* dy, const uint8_t* mask, float p, T* dx, int64_t n);

// --- attention_cpu.cpp: packed qkv [N, 3H], ctx [N, H], probs and drop_mask [heads · Σ L²] ---------
// drop_mask null when p == 0; key.first 0 (attention_dropout_number).
template <class T>
void attention_forward(const T* qkv, const PackedSequences& seqs, const AttentionShape& s, float p,
                       const DropoutKey& key, T* ctx, T* probs, uint8_t* drop_mask);
template <class T>
void attention_backward(const T* dctx, const T* qkv, const T* probs, const uint8_t* drop_mask,
                        const PackedSequences& seqs, const AttentionShape& s, float p, T* dqkv);

// --- cross_entropy_cpu.cpp: logits [m, c], targets [m]; dlogits [m, c], row_weights [m] and
// row_losses [m] or null ----------------------------------------------------------------------------
template <class T>
CrossEntropyResult cross_entropy(const T* logits, const int32_t* targets, int64_t m, int64_t c, T* dlogits,
                                 double grad_scale, const double* row_weights, double* row_losses);
// classes [m] and log_probs [m] (host): each row's first maximum and its log-softmax.
template <class T>
void best_classes(const T* logits, int64_t m, int64_t c, int32_t* classes, double* log_probs);

// --- elementwise_cpu.cpp: n elements ------------------------------------------------------------
template <class T>
void add(const T* a, const T* b, T* out, int64_t n);
template <class T>
void accumulate(T* acc, const T* x, int64_t n);
template <class T>
void multiply(const T* a, const T* b, T* out, int64_t n);
// dst row first + i·stride = src row i, i < m (rows of h elements).
template <class T>
void copy_rows_strided(const T* src, int64_t m, int64_t h, T* dst, int64_t first, int64_t stride);
template <class T>
void scale(T* x, double s, int64_t n);
template <class T>
double sum_of_squares(const T* x, int64_t n);

// --- char_convolution_cpu.cpp (nn/ops/char_convolution.hpp): dx, dw, db (or null) accumulated --------
template <class T>
void char_convolution_forward(const T* x, const T* w, const T* b, const CharConvolutionShape& s, T* out,
                              int32_t* argmax);
template <class T>
void char_convolution_backward(const T* dout, const T* x, const T* w, const int32_t* argmax,
                               const CharConvolutionShape& s, T* dx, T* dw, T* db);

// --- highway_cpu.cpp (nn/ops/highway.hpp): x [n, h], pre [n, 2h] -----------------------------------
template <class T>
void highway_forward(const T* x, const T* pre, T* y, int64_t n, int64_t h);
template <class T>
void highway_backward(const T* dy, const T* x, const T* pre, T* dx, T* dpre, int64_t n, int64_t h, bool accumulate);

// --- block_scores_cpu.cpp (nn/ops/block_scores.hpp): q, k [m, a], scores [m, t] ----------------------
template <class T>
void block_scores_forward(const T* q, const T* k, const T* bias, const int32_t* starts, const int32_t* lengths,
                          T* scores, int64_t m, int64_t a, int64_t t);
template <class T>
void block_scores_backward(const T* dscores, const T* q, const T* k, const int32_t* starts, const int32_t* lengths,
                           T* dq, T* dk, T* dbias, int64_t m, int64_t a, int64_t t);

// --- soft_align_cpu.cpp (nn/ops/soft_align.hpp): x [Σ la + lb, d], layout [pairs, 4] -------------------
template <class T>
void soft_align_forward(const T* x, const int32_t* layout, T* weights, T* aligned, int64_t pairs, int64_t d);
template <class T>
void soft_align_backward(const T* daligned, const T* x, const int32_t* layout, const T* weights, T* dweights, T* dx,
                         int64_t pairs, int64_t d);

// --- segment_pool_cpu.cpp (nn/ops/segment_pool.hpp): x [n, d], segments [s, 2], out [s, 2d] ----------
template <class T>
void segment_pool_forward(const T* x, const int32_t* segments, T* out, int32_t* argmax, int64_t n, int64_t s,
                          int64_t d);
template <class T>
void segment_pool_backward(const T* dout, const int32_t* segments, const int32_t* argmax, T* dx, int64_t n, int64_t s,
                           int64_t d);

// --- outer_product_cpu.cpp (nn/ops/outer_product.hpp): a [n, p], b [n, q], z [n, p·q] ----------------
template <class T>
void outer_product_forward(const T* a, const T* b, T* z, int64_t n, int64_t p, int64_t q);
template <class T>
void outer_product_backward(const T* dz, const T* a, const T* b, T* da, T* db, int64_t n, int64_t p, int64_t q);

// --- scalar_mix_cpu.cpp (nn/ops/scalar_mix.hpp): x [layers, n] ----------------------------------------
template <class T>
void scalar_mix_forward(const T* x, const float* coefficients, T* y, int64_t layers, int64_t n);
template <class T>
void scalar_mix_dots(const T* dy, const T* x, int64_t layers, int64_t n, double* dots);

// --- lstm_cpu.cpp (nn/ops/lstm.hpp): rows step-major; c0, cell and c_last of T here --------------
template <class T>
void lstm_forward(const T* gates_x, const T* w_h, const T* w_proj, const T* h0, const T* c0, const LstmShape& s, T* h,
                  T* gates, T* memory, T* projected, T* cell, T* c_last);
template <class T>
void lstm_backward(const T* dh, const T* w_h, const T* w_proj, const T* h0, const T* c0, const T* h, const T* gates,
                   const T* memory, const T* projected, const T* cell, const LstmShape& s, T* dgates_x, T* dw_h,
                   T* dw_proj);

// --- sampled_softmax_cpu.cpp (nn/ops/sampled_softmax.hpp): row by row, for M rows and S sampled
// classes. logits [M, S] holds h·w_sampledᵀ + b_sampled on entry and grad_scale times its gradient on
// return; w_true [M, p] and b_true [M] are the targets' rows. Written: dh [M, p] = dtrue·w_true,
// scaled_h [M, p] = dtrue·h and dtrue [M], dtrue the gradient of the true logit.
template <class T>
CrossEntropyResult sampled_softmax_rows(const T* h, const T* w_true, const T* b_true, const int32_t* targets,
                                        const int32_t* ids, T* logits, int64_t m, int64_t s, int64_t p,
                                        const LogUniform& q, double grad_scale, T* dh, T* scaled_h, T* dtrue);

// --- adagrad_cpu.cpp ----------------------------------------------------------------------------
template <class T>
void adagrad_update(T* param, const T* grad, T* accum, int64_t n, double lr, double grad_scale);

// --- adamw_cpu.cpp ------------------------------------------------------------------------------
template <class T>
void adamw_update(T* param, const T* grad, T* m, T* v, int64_t n, const AdamWHyper& hyper, double grad_scale);

}  // namespace kglm::nn::cpu
