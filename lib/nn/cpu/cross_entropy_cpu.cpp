// Softmax cross-entropy, one row per iteration. Each row's log-sum-exp is stable (the maximum is
// subtracted) and summed in double, the exponentials themselves taken in T (exp_of); row losses
// are summed serially, so the total does not depend on the thread count.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "nn/cpu/kernels.hpp"
#include "nn/ops/index_range.hpp"

namespace kglm::nn::cpu {

namespace {

// A row's maximum and its first position, as torch.argmax.
template <class T>
std::pair<T, int64_t> row_max(const T* x, int64_t c) {
  T max = x[0];
#pragma omp simd reduction(max : max)
  for (int64_t j = 1; j < c; ++j) max = std::max(max, x[j]);
  int64_t argmax = 0;
  while (argmax + 1 < c && !(x[argmax] == max)) ++argmax;  // bounded: NaN logits never match
  return {max, argmax};
}

}  // namespace

template <class T>
CrossEntropyResult cross_entropy(const T* logits, const int32_t* targets, int64_t m, int64_t c, T* dlogits,
                                 double grad_scale, const double* row_weights, double* row_losses) {
  for (int64_t r = 0; r < m; ++r) {
    const int32_t t = targets[r];
    if (!IndexRange::classes(c, kIgnoreIndex).accepts(t))
      throw Error("cross_entropy: targets[" + std::to_string(r) + "] = " + std::to_string(t) + " is outside [0, " +
                  std::to_string(c) + ") and is not the ignore index " + std::to_string(kIgnoreIndex));
  }
  std::vector<double> loss(static_cast<size_t>(m), 0.0);
  std::vector<uint8_t> correct(static_cast<size_t>(m), 0);
#pragma omp parallel for schedule(static) if (m * c >= kParallelGrain)
  for (int64_t r = 0; r < m; ++r) {
    const T* x = logits + r * c;
    T* g = dlogits ? dlogits + r * c : nullptr;
    const int32_t t = targets[r];
    if (t == kIgnoreIndex) {
      if (g) std::fill(g, g + c, T(0));
      continue;
    }
    // Not a structured binding: clang 14 cannot use one inside the simd loops below.
    const auto best = row_max(x, c);
    const T max = best.first;
    const auto argmax = best.second;
    const T target = x[t];  // read before g, which may be x itself, is written
    double sum = 0;
    if (g) {
      // Keep the exponentials: softmax = exp(x − max) / sum.
#pragma omp simd reduction(+ : sum)
      for (int64_t j = 0; j < c; ++j) {
        const T e = exp_of<T>(x[j] - max);
        g[j] = e;
        sum += e;
      }
    } else {
#pragma omp simd reduction(+ : sum)
      for (int64_t j = 0; j < c; ++j) sum += exp_of<T>(x[j] - max);
    }
    loss[r] = static_cast<double>(max) + std::log(sum) - static_cast<double>(target);
    correct[r] = argmax == t;
    if (g) {
      const double scale = row_weights ? grad_scale * row_weights[r] : grad_scale;
      const T s = static_cast<T>(scale / sum);
#pragma omp simd
      for (int64_t j = 0; j < c; ++j) g[j] *= s;
      g[t] -= static_cast<T>(scale);
    }
  }
  if (row_losses) std::copy(loss.begin(), loss.end(), row_losses);
  return sum_row_results(targets, loss.data(), correct.data(), m);
}

template <class T>
void best_classes(const T* logits, int64_t m, int64_t c, int32_t* classes, double* log_probs) {
#pragma omp parallel for schedule(static) if (m * c >= kParallelGrain)
  for (int64_t r = 0; r < m; ++r) {
    const T* x = logits + r * c;
    const auto best = row_max(x, c);
    const T max = best.first;
    double sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < c; ++j) sum += exp_of<T>(x[j] - max);
    classes[r] = static_cast<int32_t>(best.second);
    log_probs[r] = -std::log(sum);
  }
}

template void best_classes<float>(const float*, int64_t, int64_t, int32_t*, double*);
template void best_classes<double>(const double*, int64_t, int64_t, int32_t*, double*);

template CrossEntropyResult cross_entropy<float>(const float*, const int32_t*, int64_t, int64_t, float*, double,
                                                 const double*, double*);
template CrossEntropyResult cross_entropy<double>(const double*, const int32_t*, int64_t, int64_t, double*, double,
                                                  const double*, double*);

}  // namespace kglm::nn::cpu
