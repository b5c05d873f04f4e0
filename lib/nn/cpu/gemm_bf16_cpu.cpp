// The bf16 matrix products of --precision bf16 on the CPU (nn/cpu_precision.hpp), on oneDNN's
// matmul: operands bf16, accumulation and C fp32, with the kernels oneDNN picks for the CPU (AMX
// tiles where present, AVX512-BF16 otherwise).
//
// One matmul per orientation and beta, with every dimension and leading dimension given at run time
// (DNNL_RUNTIME_DIM_VAL): oneDNN then runs its bf16 gemm, with no kernel compiled per shape, so
// batches of varying length cost nothing more (shape-specific primitives cost 0.5-4 ms each to
// compile: 3x slower fine-tuning). alpha is folded into A as it is rounded, because oneDNN 2.6's
// gemm with output scales runs at a third of its speed; the rounding to bf16 is written here (a
// loop the compiler vectorises) for the same reason: its reorder primitive is per shape.
#include <oneapi/dnnl/dnnl.hpp>

#include <bit>
#include <cstdint>
#include <map>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include "nn/cpu/kernels.hpp"

namespace kglm::nn::cpu {

namespace {

using dnnl::memory;

// Whether bf16 gains on an m x n x k product: what rounding both operands costs (and oneDNN packing
// them) against what the bf16 kernels save, as measured on the development machine (AMX): sgemm
// ~150 GFLOP/s, bf16 ~600, so ~5 ps saved per flop; ~1 ns per rounded element, ~4 ns for an operand
// past 128 MB (an XLM-R vocabulary's 250,002 x 256 output matrix). Measured (one thread, sgemm and
// bf16): attention's 128x128x64 per-head product 20.4 and 18.8 µs (stays fp32); 180 masked rows
// against 250,002 words (k 256) 188 and 305 ms (fp32), 1,000 rows 943 and 767 ms (bf16), 180 rows
// against 32,000 words 23.1 and 17.8 ms (bf16); a training batch's 4096x1024x256 13.3 and 5.7 ms,
// 4096x256x1024 14.1 and 4.6 ms (bf16). Below 1 MFLOP the call's own cost (~8 µs) decides.
double rounding_seconds(double elements) { return elements * (elements > 32e6 ? 4e-9 : 1e-9); }

// b_rounded: op(B) is a frozen weight's copy, already bf16 (only A is rounded).
bool bf16_gains(int64_t m, int64_t n, int64_t k, bool b_rounded = false) {
  const double dm = static_cast<double>(m), dn = static_cast<double>(n), dk = static_cast<double>(k);
  const double flops = 2 * dm * dn * dk;
  return k > 0 && flops >= 1e6 &&
         rounding_seconds(dm * dk) + (b_rounded ? 0 : rounding_seconds(dk * dn)) < flops * 5e-12;
}
constexpr memory::dim kRuntime = DNNL_RUNTIME_DIM_VAL;

dnnl::engine& cpu_engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// Round to nearest even; NaN stays a quiet NaN (same as nn/convert.cpp's f32_to_bf16, inline so
// that the loop vectorises).
inline uint16_t round_to_bf16(float x) {
  const uint32_t u = std::bit_cast<uint32_t>(x);
  const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
  return (u & 0x7fffffffu) > 0x7f800000u ? static_cast<uint16_t>((u >> 16) | 0x40u) : static_cast<uint16_t>(rounded);
}

// scale · x for the rows × cols array x (leading dimension ld) into dense bf16 (leading dimension
// cols), on the OpenMP threads unless inside a parallel region or small.
void to_bf16(const float* x, int64_t rows, int64_t cols, int64_t ld, float scale, uint16_t* out) {
#pragma omp parallel for schedule(static) if (rows * cols >= kParallelGrain && !omp_in_parallel())
  for (int64_t r = 0; r < rows; ++r) {
    const float* in = x + r * ld;
    uint16_t* o = out + r * cols;
#pragma omp simd
    for (int64_t c = 0; c < cols; ++c) o[c] = round_to_bf16(scale * in[c]);
  }
}

// op(X) [rows, cols] stored as X row-major with leading dimension ld: strides {ld, 1}, or {1, ld}
// when transposed.
memory::dims strides(bool trans, int64_t ld) { return trans ? memory::dims{1, ld} : memory::dims{ld, 1}; }

dnnl::matmul make_matmul(bool trans_a, bool trans_b, float beta) {
  const memory::desc a({kRuntime, kRuntime}, memory::data_type::bf16, strides(trans_a, kRuntime));
  const memory::desc b({kRuntime, kRuntime}, memory::data_type::bf16, strides(trans_b, kRuntime));
  const memory::desc c({kRuntime, kRuntime}, memory::data_type::f32, memory::dims{kRuntime, 1});
  dnnl::post_ops ops;
  if (beta != 0.0f) ops.append_sum(beta);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
#if DNNL_VERSION_MAJOR >= 3
  return dnnl::matmul(dnnl::matmul::primitive_desc(cpu_engine(), a, b, c, attr));
#else
  return dnnl::matmul(dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), attr, cpu_engine()));
#endif
}

// The matmul of an orientation and beta, made once (primitives may run on several threads at once).
const dnnl::matmul& matmul_for(bool trans_a, bool trans_b, float beta) {
  static std::mutex mutex;
  static std::map<std::tuple<bool, bool, uint32_t>, dnnl::matmul> made;
  const std::lock_guard lock(mutex);
  auto [it, inserted] = made.try_emplace({trans_a, trans_b, std::bit_cast<uint32_t>(beta)});
  if (inserted) {
    try {
      it->second = make_matmul(trans_a, trans_b, beta);
    } catch (...) {
      made.erase(it);
      throw;
    }
  }
  return it->second;
}

// C = op(A16) · op(B16) + beta · C, A16 [m, k] and B16 [k, n] dense bf16 (stored transposed when
// trans_x). Throws dnnl::error.
void multiply(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const uint16_t* a16, const uint16_t* b16,
              float beta, float* c, int64_t ldc) {
  const dnnl::matmul& matmul = matmul_for(trans_a, trans_b, beta);
  // Per thread: attention calls this from its own parallel loop (oneDNN then runs on the calling
  // thread); at the top level oneDNN spreads the product over the OpenMP threads itself.
  thread_local dnnl::stream stream(cpu_engine());
  const dnnl::engine& engine = cpu_engine();
  memory am(memory::desc({m, k}, memory::data_type::bf16, strides(trans_a, trans_a ? m : k)), engine,
            const_cast<uint16_t*>(a16));
  memory bm(memory::desc({k, n}, memory::data_type::bf16, strides(trans_b, trans_b ? k : n)), engine,
            const_cast<uint16_t*>(b16));
  memory cm(memory::desc({m, n}, memory::data_type::f32, memory::dims{ldc, 1}), engine, c);
  matmul.execute(stream, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
  stream.wait();
}

// The frozen weights: the parameter buffers of models that only predict (ParameterStore's
// freeze_weights), and the bf16 copies of the weight matrices products have read from them.
struct FrozenWeights {
  std::mutex mutex;
  std::map<const float*, const float*> ranges;                                          // begin -> end
  std::map<std::tuple<const float*, int64_t, int64_t>, std::vector<uint16_t>> rounded;  // (w, rows, cols)

  void drop_copies(const float* begin) {
    const float* end = ranges.at(begin);
    std::erase_if(rounded, [&](const auto& entry) {
      const float* w = std::get<0>(entry.first);
      return w >= begin && w < end;
    });
  }
};

FrozenWeights& frozen_weights() {
  static FrozenWeights frozen;
  return frozen;
}

}  // namespace

void freeze_weights(const float* begin, int64_t count) {
  FrozenWeights& f = frozen_weights();
  const std::lock_guard lock(f.mutex);
  if (f.ranges.contains(begin)) f.drop_copies(begin);
  f.ranges[begin] = begin + count;
}

void thaw_weights(const float* begin) noexcept {
  FrozenWeights& f = frozen_weights();
  const std::lock_guard lock(f.mutex);
  if (!f.ranges.contains(begin)) return;
  f.drop_copies(begin);
  f.ranges.erase(begin);
}

bool gemm_bf16(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t lda,
               const float* b, int64_t ldb, float beta, float* c, int64_t ldc) noexcept {
  if (!bf16_gains(m, n, k)) return false;
  try {
    thread_local std::vector<uint16_t> a16, b16;
    a16.resize(static_cast<size_t>(m * k));
    b16.resize(static_cast<size_t>(k * n));
    // Stored as [k, m] when transposed; dense copies keep the orientation.
    to_bf16(a, trans_a ? k : m, trans_a ? m : k, lda, alpha, a16.data());
    to_bf16(b, trans_b ? n : k, trans_b ? k : n, ldb, 1.0f, b16.data());
    multiply(trans_a, trans_b, m, n, k, a16.data(), b16.data(), beta, c, ldc);
    return true;
  } catch (...) {  // dnnl::error or bad_alloc, raised before the matmul writes C
    return false;
  }
}

bool linear_bf16_frozen(const float* x, const float* w, float beta, float* y, int64_t n, int64_t in,
                        int64_t out) noexcept {
  if (!bf16_gains(n, out, in, true)) return false;
  try {
    FrozenWeights& f = frozen_weights();
    const uint16_t* w16 = nullptr;
    {
      const std::lock_guard lock(f.mutex);
      auto range = f.ranges.upper_bound(w);
      if (range == f.ranges.begin() || w + out * in > (--range)->second) return false;  // not a frozen weight
      auto [copy, inserted] = f.rounded.try_emplace({w, out, in});
      if (inserted) {
        try {
          copy->second.resize(static_cast<size_t>(out * in));
        } catch (...) {
          f.rounded.erase(copy);
          throw;
        }
        to_bf16(w, out, in, in, 1.0f, copy->second.data());
      }
      w16 = copy->second.data();  // stays put until the store thaws: the caller's weights outlive this call
    }
    thread_local std::vector<uint16_t> x16;
    x16.resize(static_cast<size_t>(n * in));
    to_bf16(x, n, in, in, 1.0f, x16.data());
    multiply(false, true, n, out, in, x16.data(), w16, beta, y, out);
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace kglm::nn::cpu
