// CUDA kernels of the ops (private to lib/nn), the twins of nn/cpu/kernels.hpp: raw device
// pointers, contiguous row-major arrays, launched on the context's stream (context.hpp). The
// dispatch files (nn/ops/*.cpp) have checked shapes, dtypes, devices and aliasing; a launcher
// checks what needs the data (ids and targets in range) before it writes anything, which costs
// one wait for the GPU.
//
// Determinism: no float atomics anywhere. Reductions run over fixed blocks combined in a fixed
// order, and scatter-adds sort their ids first and add each id's rows in row order, so the same
// run gives the same bits on the same GPU, and adds happen in the CPU's order where the CPU's
// result is a plain sequence of adds (embedding backward). Randomness is the CPU's Philox streams.
//
// Declared without CUDA headers, so the dispatch files compile in every build; defined in
// nn/cuda/<op>_cuda.cu. T, the storage type of activations and of the weights the kernels read, is
// float, Bf16 or Half (mixed precision); every kernel computes in fp32 whatever T is, and what
// accumulates over steps or rows — parameter gradients, LayerNorm statistics — is always float
// ("wide"). bf16 needs no sm_80 instruction here (conversions only), so the kernels build for
// sm_70; cuBLASLt's bf16 products need sm_80, which the trainer checks.
#pragma once

#include <cstdint>
#include <string_view>

#include "nn/ops/adamw.hpp"
#include "nn/ops/attention.hpp"
#include "nn/ops/biased_attention.hpp"
#include "nn/ops/char_convolution.hpp"
#include "nn/ops/cross_entropy.hpp"
#include "nn/ops/dropout.hpp"
#include "nn/ops/index_range.hpp"
#include "nn/ops/lstm.hpp"
#include "nn/ops/sampled_softmax.hpp"

namespace kglm::nn::cuda {

// Storage tags of the half-precision kernels: the bit patterns of bfloat16 and IEEE binary16,
// read as __nv_bfloat16 and __half inside the .cu files.
struct Bf16 {
  uint16_t bits;
};
struct Half {
  uint16_t bits;
};

// Throws kglm::Error naming `op` and `arg` ("op: arg[i] = v is outside [0, n)") at the first index
// that `range` does not accept.
void check_indices(std::string_view op, std::string_view arg, const int32_t* index, int64_t m, IndexRange range);

// --- linear_cuda.cu (cuBLASLt, gemm.hpp): x [n, in], w [out, in], b [out] or null, y [n, out] -------------
template <class T>
void linear_forward(const T* x, const T* w, const T* b, T* y, int64_t n, int64_t in, int64_t out);
template <class T>
void linear_backward(const T* dy, const T* x, const T* w, T* dx, float* dw, float* db, int64_t n, int64_t in,
                     int64_t out, bool dx_accumulate);

// --- embedding_cuda.cu: indices checked by the caller; G (dsrc) is T or float --------------------
template <class T>
void gather_rows(const int32_t* index, int64_t m, const T* src, int64_t h, T* out, bool accumulate);
template <class T, class G>
void scatter_add_rows(const int32_t* index, int64_t m, const T* dout, int64_t n, int64_t h, G* dsrc);

// --- layer_norm_cuda.cu: x [n, h] ----------------------------------------------------------------
// With residual (else null): the LayerNorm of x + residual, that sum written to `sum` (may be x).
template <class T>
void layer_norm_forward(const T* x, const T* residual, T* sum, const T* gamma, const T* beta, double eps, T* y,
                        float* mean, float* rstd, int64_t n, int64_t h);
template <class T>
void layer_norm_backward(const T* dy, const T* x, const T* gamma, const float* mean, const float* rstd, T* dx,
                         float* dgamma, float* dbeta, int64_t n, int64_t h, bool dx_accumulate);

// --- activation_cuda.cu ----------------------------------------------------------------------------
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

// --- rms_norm_cuda.cu: x [n, h]; dx written or accumulated, dgamma (or null) accumulated ----------
template <class T>
void rms_norm_forward(const T* x, const T* gamma, double eps, T* y, float* rstd, int64_t n, int64_t h);
template <class T>
void rms_norm_backward(const T* dy, const T* x, const T* gamma, const float* rstd, T* dx, float* dgamma, int64_t n,
                       int64_t h, bool dx_accumulate);

// --- dropout_cuda.cu -------------------------------------------------------------------------------
template <class T>
void dropout_forward(const T* x, float p, const DropoutKey& key, T* y, uint8_t* mask, int64_t n);
template <class T>
void dropout_rows_forward(const T* x, float p, const DropoutKey& key, const int64_t* numbers, T* y, uint8_t* mask,
                          int64_t rows, int64_t width);
template <class T>
void dropout_backward(const T* dy, const uint8_t* mask, float p, T* dx, int64_t n);

// --- attention_cuda.cu: packed, as the CPU twin ----------------------------------------------------
template <class T>
void attention_forward(const T* qkv, const PackedSequences& seqs, const AttentionShape& s, float p,
                       const DropoutKey& key, T* ctx, T* probs, uint8_t* drop_mask);
template <class T>
void attention_backward(const T* dctx, const T* qkv, const T* probs, const uint8_t* drop_mask,
                        const PackedSequences& seqs, const AttentionShape& s, float p, T* dqkv);

// --- biased_attention_cuda.cu (see nn/ops/biased_attention.hpp): buckets checked by the caller;
// bias [heads, bias_queries, bias_keys] or null, drop_mask null when p == 0, dscores null when not
// asked for.
template <class T>
void biased_attention_forward(const T* q, const T* k, const T* v, const T* bias, int64_t bias_queries,
                              int64_t bias_keys, const AttentionPairs& pairs, const BiasedAttentionShape& s, float p,
                              const DropoutKey& key, T* ctx, T* probs, uint8_t* drop_mask);
template <class T>
void biased_attention_backward(const T* dctx, const T* q, const T* k, const T* v, const T* probs,
                               const uint8_t* drop_mask, const AttentionPairs& pairs, const BiasedAttentionShape& s,
                               float p, T* dq, T* dk, T* dv, T* dscores);
template <class T>
void relative_bias_forward(const int32_t* buckets_of, const T* table, int64_t heads, int64_t tq, int64_t tk, T* bias);
// dtable [buckets, heads] (F32: a parameter gradient) += the bias gradient summed over the
// sequences; buckets_of [bias_queries, bias_keys].
template <class T>
void relative_bias_backward(const T* dscores, const AttentionPairs& pairs, const int32_t* buckets_of,
                            int64_t bias_queries, int64_t bias_keys, int64_t heads, int64_t buckets, float* dtable);

// --- char_convolution_cuda.cu (nn/ops/char_convolution.hpp): dx (T), dw and db (fp32) accumulated,
// each when not null ---------------------------------------------------------------------------------
template <class T>
void char_convolution_forward(const T* x, const T* w, const T* b, const CharConvolutionShape& s, T* out,
                              int32_t* argmax);
template <class T>
void char_convolution_backward(const T* dout, const T* x, const T* w, const int32_t* argmax,
                               const CharConvolutionShape& s, T* dx, float* dw, float* db);

// --- highway_cuda.cu (nn/ops/highway.hpp): x [n, h], pre [n, 2h] -----------------------------------
template <class T>
void highway_forward(const T* x, const T* pre, T* y, int64_t n, int64_t h);
template <class T>
void highway_backward(const T* dy, const T* x, const T* pre, T* dx, T* dpre, int64_t n, int64_t h, bool accumulate);

// --- block_scores_cuda.cu (nn/ops/block_scores.hpp): q, k [m, a], scores [m, t] ----------------------
template <class T>
void block_scores_forward(const T* q, const T* k, const T* bias, const int32_t* starts, const int32_t* lengths,
                          T* scores, int64_t m, int64_t a, int64_t t);
template <class T>
void block_scores_backward(const T* dscores, const T* q, const T* k, const int32_t* starts, const int32_t* lengths,
                           T* dq, T* dk, T* dbias, int64_t m, int64_t a, int64_t t);

// --- outer_product_cuda.cu (nn/ops/outer_product.hpp): a [n, p], b [n, q], z [n, p·q] ----------------
template <class T>
void outer_product_forward(const T* a, const T* b, T* z, int64_t n, int64_t p, int64_t q);
template <class T>
void outer_product_backward(const T* dz, const T* a, const T* b, T* da, T* db, int64_t n, int64_t p, int64_t q);

// --- soft_align_cuda.cu (nn/ops/soft_align.hpp): x [m, d], layout [pairs, 4], weights [w] -----------
template <class T>
void soft_align_forward(const T* x, const int32_t* layout, T* weights, T* aligned, int64_t pairs, int64_t m, int64_t d,
                        int64_t w);
template <class T>
void soft_align_backward(const T* daligned, const T* x, const int32_t* layout, const T* weights, T* dweights, T* dx,
                         int64_t pairs, int64_t m, int64_t d, int64_t w);

// --- segment_pool_cuda.cu (nn/ops/segment_pool.hpp): x [n, d], segments [s, 2], out [s, 2d] ----------
template <class T>
void segment_pool_forward(const T* x, const int32_t* segments, T* out, int32_t* argmax, int64_t n, int64_t s,
                          int64_t d);
template <class T>
void segment_pool_backward(const T* dout, const int32_t* segments, const int32_t* argmax, T* dx, int64_t n, int64_t s,
                           int64_t d);

// --- scalar_mix_cuda.cu (nn/ops/scalar_mix.hpp): x [layers, n] ----------------------------------------
template <class T>
void scalar_mix_forward(const T* x, const float* coefficients, T* y, int64_t layers, int64_t n);
template <class T>
void scalar_mix_dots(const T* dy, const T* x, int64_t layers, int64_t n, double* dots);

// --- lstm_cuda.cu (nn/ops/lstm.hpp): the cell state (c0, cell, c_last) and the weight gradients in
// fp32 whatever T is ---------------------------------------------------------------------------------
template <class T>
void lstm_forward(const T* gates_x, const T* w_h, const T* w_proj, const T* h0, const float* c0, const LstmShape& s,
                  T* h, T* gates, T* memory, T* projected, float* cell, float* c_last);
template <class T>
void lstm_backward(const T* dh, const T* w_h, const T* w_proj, const T* h0, const float* c0, const T* h, const T* gates,
                   const T* memory, const T* projected, const float* cell, const LstmShape& s, T* dgates_x, float* dw_h,
                   float* dw_proj);

// --- sampled_softmax_cuda.cu (nn/ops/sampled_softmax.hpp): as the CPU's sampled_softmax_rows --------
template <class T>
CrossEntropyResult sampled_softmax_rows(const T* h, const T* w_true, const T* b_true, const int32_t* targets,
                                        const int32_t* ids, T* logits, int64_t m, int64_t s, int64_t p,
                                        const LogUniform& q, double grad_scale, T* dh, T* scaled_h, T* dtrue);

// --- cross_entropy_cuda.cu: targets checked by the caller; row_weights, row_losses on the device ----
template <class T>
CrossEntropyResult cross_entropy(const T* logits, const int32_t* targets, int64_t m, int64_t c, T* dlogits,
                                 double grad_scale, const double* row_weights, double* row_losses);
// classes [m] and log_probs [m] are host arrays (the results are read back).
template <class T>
void best_classes(const T* logits, int64_t m, int64_t c, int32_t* classes, double* log_probs);

// --- elementwise_cuda.cu ----------------------------------------------------------------------------
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
// out[j] += Σ_r x[r, j], x [n, h] (reduced over fixed chunks of rows, in order: deterministic).
template <class T>
void add_column_sums(const T* x, int64_t n, int64_t h, float* out);
// out = x rounded to To (float to Bf16/Half: to nearest even; to float: exact).
template <class From, class To>
void convert(const From* x, To* out, int64_t n);

// --- adagrad_cuda.cu (F32) ----------------------------------------------------------------------
void adagrad_update(float* param, const float* grad, float* accum, int64_t n, double lr, double grad_scale);

// --- adamw_cuda.cu -----------------------------------------------------------------------------------
template <class T>
void adamw_update(T* param, const T* grad, T* m, T* v, int64_t n, const AdamWHyper& hyper, double grad_scale);
// Every chunk of a segment table (adamw_segment_table: I64 [chunks, 4]) in one launch.
void adamw_update_segments(float* values, const float* grads, float* m, float* v, const int64_t* table, int64_t chunks,
                           const AdamWHyper& hyper, double grad_scale);

}  // namespace kglm::nn::cuda
