// Micro benchmark (run by hand, not a test): forward and backward of the ops of one encoder layer,
// F32, at B=16, T=128, H=256, A=4, F=1024, timed op by op. Compare with ops_microbench.py (the same
// ops in PyTorch). Threads: OMP_NUM_THREADS (e.g. 2). The products run on oneDNN and OpenBLAS as
// linear_cpu.cpp chooses (gemm_microbench.cpp compares the two libraries shape by shape).
// Time on a machine shared with other busy processes is not meaningful at 2 threads: each
// parallel region waits for its slowest thread.
//
//   nn_ops_microbench [attention dropout p = 0.1] [iterations = 20]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "core/rng.hpp"
#include "nn/ops/activation.hpp"
#include "nn/ops/attention.hpp"
#include "nn/ops/layer_norm.hpp"
#include "nn/ops/linear.hpp"

using namespace kglm::nn;

namespace {

Tensor random(const Shape& shape, uint64_t seed, float scale) {
  Tensor t = Tensor::empty(shape);
  kglm::Rng rng(seed, 0);
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = scale * static_cast<float>(2 * rng.uniform() - 1);
  return t;
}

struct Timer {
  std::map<std::string, std::vector<double>> samples;
  std::vector<std::string> order;
  template <class F>
  void time(const std::string& name, F&& f) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    const auto t1 = std::chrono::steady_clock::now();
    if (!samples.count(name)) order.push_back(name);
    samples[name].push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  }
};

}  // namespace

int main(int argc, char** argv) {
  const float p = argc > 1 ? std::strtof(argv[1], nullptr) : 0.1f;
  const int iterations = argc > 2 ? std::atoi(argv[2]) : 20;
  const int64_t B = 16, T = 128, H = 256, A = 4, F = 1024;
  std::vector<int64_t> lengths;
  for (int64_t b = 0; b < B; ++b) lengths.push_back(T - (b * 7) % 48);  // varied lengths, as in a real batch
  const PackedSequences seqs = PackedSequences::from_lengths(lengths);
  const int64_t N = seqs.tokens(), S = seqs.score_elements(A);
  const AttentionShape shape{A, H};
  const float ws = 0.0625f;  // ~ 1/sqrt(H): keeps activations O(1)

  Tensor x = random({N, H}, 1, 1.0f);
  Tensor w_qkv = random({3 * H, H}, 2, ws), b_qkv = random({3 * H}, 3, 0.1f);
  Tensor w_out = random({H, H}, 4, ws), b_out = random({H}, 5, 0.1f);
  Tensor w_up = random({F, H}, 6, ws), b_up = random({F}, 7, 0.1f);
  Tensor w_down = random({H, F}, 8, 0.03125f), b_down = random({H}, 9, 0.1f);
  Tensor g1 = random({H}, 10, 1.0f), be1 = random({H}, 11, 0.1f), g2 = random({H}, 12, 1.0f);
  Tensor be2 = random({H}, 13, 0.1f);

  Tensor qkv = Tensor::empty({N, 3 * H}), ctx = Tensor::empty({N, H}), probs = Tensor::empty({S});
  Tensor pmask = Tensor::empty({S}, DType::U8), o = Tensor::empty({N, H}), h1 = Tensor::empty({N, H});
  Tensor m1 = Tensor::empty({N}), r1 = Tensor::empty({N}), up = Tensor::empty({N, F}), act = Tensor::empty({N, F});
  Tensor down = Tensor::empty({N, H}), out = Tensor::empty({N, H}), m2 = Tensor::empty({N}), r2 = Tensor::empty({N});

  Tensor dout = random({N, H}, 14, 1.0f), d_down = Tensor::empty({N, H}), d_act = Tensor::empty({N, F});
  Tensor d_h1 = Tensor::empty({N, H}), d_o = Tensor::empty({N, H}), d_ctx = Tensor::empty({N, H});
  Tensor d_qkv = Tensor::empty({N, 3 * H}), dx = Tensor::empty({N, H});
  Tensor dw_qkv = Tensor::zeros({3 * H, H}), db_qkv = Tensor::zeros({3 * H}), dw_out = Tensor::zeros({H, H});
  Tensor db_out = Tensor::zeros({H}), dw_up = Tensor::zeros({F, H}), db_up = Tensor::zeros({F});
  Tensor dw_down = Tensor::zeros({H, F}), db_down = Tensor::zeros({H}), dg1 = Tensor::zeros({H});
  Tensor dbe1 = Tensor::zeros({H}), dg2 = Tensor::zeros({H}), dbe2 = Tensor::zeros({H});
  Tensor ctx2 = ctx, d_ctx2 = d_ctx, d_qkv2 = d_qkv;
  const DropoutKey key{1, 2};

  Timer timer;
  for (int it = -3; it < iterations; ++it) {
    Timer scratch;
    Timer& use = it < 0 ? scratch : timer;  // the first 3 iterations warm up
    const auto t0 = std::chrono::steady_clock::now();
    use.time("fwd linear qkv", [&] { linear_forward(x, w_qkv, b_qkv, qkv); });
    use.time("fwd attention", [&] { attention_forward(qkv, seqs, shape, p, key, ctx, probs, pmask); });
    use.time("fwd linear out", [&] { linear_forward(ctx2, w_out, b_out, o); });
    use.time("fwd layer_norm 1", [&] { layer_norm_forward(o, g1, be1, 1e-12, h1, m1, r1); });
    use.time("fwd linear up", [&] { linear_forward(h1, w_up, b_up, up); });
    use.time("fwd gelu", [&] { gelu_forward(up, act); });
    use.time("fwd linear down", [&] { linear_forward(act, w_down, b_down, down); });
    use.time("fwd layer_norm 2", [&] { layer_norm_forward(down, g2, be2, 1e-12, out, m2, r2); });
    const auto t1 = std::chrono::steady_clock::now();
    use.time("bwd layer_norm 2", [&] { layer_norm_backward(dout, down, g2, m2, r2, d_down, dg2, dbe2); });
    use.time("bwd linear down", [&] { linear_backward(d_down, act, w_down, d_act, dw_down, db_down); });
    use.time("bwd gelu", [&] { gelu_backward(d_act, up, d_act); });
    use.time("bwd linear up", [&] { linear_backward(d_act, h1, w_up, d_h1, dw_up, db_up); });
    use.time("bwd layer_norm 1", [&] { layer_norm_backward(d_h1, o, g1, m1, r1, d_o, dg1, dbe1); });
    use.time("bwd linear out", [&] { linear_backward(d_o, ctx2, w_out, d_ctx2, dw_out, db_out); });
    use.time("bwd attention", [&] { attention_backward(d_ctx, qkv, probs, pmask, seqs, shape, p, d_qkv); });
    use.time("bwd linear qkv", [&] { linear_backward(d_qkv2, x, w_qkv, dx, dw_qkv, db_qkv); });
    const auto t2 = std::chrono::steady_clock::now();
    use.samples["total forward"].push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    use.samples["total backward"].push_back(std::chrono::duration<double, std::milli>(t2 - t1).count());
    use.samples["total fwd+bwd"].push_back(std::chrono::duration<double, std::milli>(t2 - t0).count());
  }
  std::printf("kglm ops, F32, B=%ld T=%ld H=%ld A=%ld F=%ld, attention dropout %.2f, %d threads, median of %d\n",
              static_cast<long>(B), static_cast<long>(T), static_cast<long>(H), static_cast<long>(A),
              static_cast<long>(F), p, omp_get_max_threads(), iterations);
  for (const std::string& name : timer.order)
    std::printf("  %-18s %8.3f ms\n", name.c_str(), Timer::median(timer.samples[name]));
  for (const char* name : {"total forward", "total backward", "total fwd+bwd"})
    std::printf("  %-18s %8.3f ms\n", name, Timer::median(timer.samples[name]));
  return 0;
}
