// The row-wise part of the sampled softmax (nn/ops/sampled_softmax.hpp) on the CPU: one row per
// iteration, the log-sum-exp in double; the row losses are summed in order afterwards, so the
// total does not depend on the thread count.
#include <cmath>
#include <limits>
#include <vector>

#include "nn/cpu/kernels.hpp"

namespace kglm::nn::cpu {

template <class T>
CrossEntropyResult sampled_softmax_rows(const T* h, const T* w_true, const T* b_true, const int32_t* targets,
                                        const int32_t* ids, T* logits, int64_t m, int64_t s, int64_t p,
                                        const LogUniform& q, double grad_scale, T* dh, T* scaled_h, T* dtrue) {
  std::vector<double> log_q(static_cast<size_t>(s)), loss(static_cast<size_t>(m));
  std::vector<uint8_t> correct(static_cast<size_t>(m));
  for (int64_t j = 0; j < s; ++j) log_q[j] = q.log_expected_count(ids[j]);
#pragma omp parallel for schedule(static) if (m * s >= kParallelGrain)
  for (int64_t r = 0; r < m; ++r) {
    const T* hr = h + r * p;
    const T* wt = w_true + r * p;
    double true_logit = static_cast<double>(b_true[r]) - q.log_expected_count(targets[r]);
    for (int64_t k = 0; k < p; ++k) true_logit += static_cast<double>(hr[k]) * wt[k];
    T* row = logits + r * s;
    double top = true_logit, best_sampled = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < s; ++j) {
      if (ids[j] == targets[r]) continue;  // an accidental hit: left out of the softmax
      const double x = static_cast<double>(row[j]) - log_q[j];
      top = std::max(top, x);
      best_sampled = std::max(best_sampled, x);
    }
    double sum = std::exp(true_logit - top);
    for (int64_t j = 0; j < s; ++j)
      if (ids[j] != targets[r]) sum += std::exp(static_cast<double>(row[j]) - log_q[j] - top);
    loss[r] = std::log(sum) + top - true_logit;
    correct[r] = true_logit > best_sampled;
    for (int64_t j = 0; j < s; ++j)
      row[j] = ids[j] == targets[r]
                   ? T(0)
                   : static_cast<T>(grad_scale * std::exp(static_cast<double>(row[j]) - log_q[j] - top) / sum);
    const T d = static_cast<T>(grad_scale * (std::exp(true_logit - top) / sum - 1.0));
    dtrue[r] = d;
    for (int64_t k = 0; k < p; ++k) {
      dh[r * p + k] = d * wt[k];
      scaled_h[r * p + k] = d * hr[k];
    }
  }
  CrossEntropyResult result;
  for (int64_t r = 0; r < m; ++r) {
    result.loss_sum += loss[r];
    result.correct += correct[r];
  }
  result.counted = m;
  return result;
}

template CrossEntropyResult sampled_softmax_rows<float>(const float*, const float*, const float*, const int32_t*,
                                                        const int32_t*, float*, int64_t, int64_t, int64_t,
                                                        const LogUniform&, double, float*, float*, float*);
template CrossEntropyResult sampled_softmax_rows<double>(const double*, const double*, const double*, const int32_t*,
                                                         const int32_t*, double*, int64_t, int64_t, int64_t,
                                                         const LogUniform&, double, double*, double*, double*);

}  // namespace kglm::nn::cpu
