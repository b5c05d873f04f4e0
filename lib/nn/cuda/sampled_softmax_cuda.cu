// The row-wise part of the sampled softmax (nn/ops/sampled_softmax.hpp), the twin of
// cpu/sampled_softmax_cpu.cpp: one block per row, reductions in fp32 in a fixed order; the row
// losses are read back and summed in order on the host.
#include <cfloat>
#include <vector>

#include "nn/cuda/common.cuh"
#include "nn/cuda/kernels.hpp"

namespace kglm::nn::cuda {

namespace {

__global__ void log_expected_kernel(const int32_t* ids, int64_t s, LogUniform q, float* log_q) {
  for (int64_t j = global_thread(); j < s; j += grid_threads()) log_q[j] = static_cast<float>(q.log_expected_count(ids[j]));
}

template <class T>
__global__ void sampled_rows_kernel(const T* h, const T* w_true, const T* b_true, const int32_t* targets,
                                    const int32_t* ids, const float* log_q, T* logits, int64_t s, int64_t p,
                                    LogUniform q, float grad_scale, T* dh, T* scaled_h, T* dtrue, double* loss,
                                    uint8_t* correct) {
  __shared__ float scratch[32];
  const int64_t r = blockIdx.x;
  const int32_t target = targets[r];
  const T* hr = h + r * p;
  const T* wt = w_true + r * p;
  float dot = 0;
  for (int64_t k = threadIdx.x; k < p; k += blockDim.x) dot += to_float(hr[k]) * to_float(wt[k]);
  const float true_logit =
      block_sum(dot, scratch) + to_float(b_true[r]) - static_cast<float>(q.log_expected_count(target));
  T* row = logits + r * s;
  float top = -FLT_MAX;
  for (int64_t j = threadIdx.x; j < s; j += blockDim.x)
    if (ids[j] != target) top = fmaxf(top, to_float(row[j]) - log_q[j]);
  const float best_sampled = block_max(top, scratch, -FLT_MAX);
  const float m = fmaxf(best_sampled, true_logit);
  float part = 0;
  for (int64_t j = threadIdx.x; j < s; j += blockDim.x)
    if (ids[j] != target) part += expf(to_float(row[j]) - log_q[j] - m);
  const float sum = block_sum(part, scratch) + expf(true_logit - m);
  for (int64_t j = threadIdx.x; j < s; j += blockDim.x)
    row[j] = from_float<T>(ids[j] == target ? 0.0f : grad_scale * expf(to_float(row[j]) - log_q[j] - m) / sum);
  const float d = grad_scale * (expf(true_logit - m) / sum - 1.0f);
  for (int64_t k = threadIdx.x; k < p; k += blockDim.x) {
    dh[r * p + k] = from_float<T>(d * to_float(wt[k]));
    scaled_h[r * p + k] = from_float<T>(d * to_float(hr[k]));
  }
  if (threadIdx.x == 0) {
    dtrue[r] = from_float<T>(d);
    loss[r] = static_cast<double>(logf(sum) + m - true_logit);
    correct[r] = true_logit > best_sampled;
  }
}

}  // namespace

template <class T>
CrossEntropyResult sampled_softmax_rows(const T* h, const T* w_true, const T* b_true, const int32_t* targets,
                                        const int32_t* ids, T* logits, int64_t m, int64_t s, int64_t p,
                                        const LogUniform& q, double grad_scale, T* dh, T* scaled_h, T* dtrue) {
  constexpr std::string_view op = "sampled_softmax_loss";
  CrossEntropyResult result;
  if (m == 0) return result;
  DeviceBuffer<float> log_q(s);
  DeviceBuffer<double> loss(m);
  DeviceBuffer<uint8_t> correct(m);
  launch_elementwise(log_expected_kernel, op, s, ids, s, q, log_q.get());
  sampled_rows_kernel<<<static_cast<unsigned>(m), kThreads, 0, Context::get().stream()>>>(
      native(h), native(w_true), native(b_true), targets, ids, log_q.get(), native(logits), s, p, q,
      static_cast<float>(grad_scale), native(dh), native(scaled_h), native(dtrue), loss.get(), correct.get());
  check_launch(op);
  std::vector<double> host_loss(static_cast<size_t>(m));
  std::vector<uint8_t> host_correct(static_cast<size_t>(m));
  read_back(loss.get(), host_loss.data(), m, op);
  read_back(correct.get(), host_correct.data(), m, op);
  for (int64_t r = 0; r < m; ++r) {
    result.loss_sum += host_loss[r];
    result.correct += host_correct[r];
  }
  result.counted = m;
  return result;
}

#define KGLM_SAMPLED_SOFTMAX_CUDA(T)                                                                                   \
  template CrossEntropyResult sampled_softmax_rows<T>(const T*, const T*, const T*, const int32_t*, const int32_t*, \
                                                      T*, int64_t, int64_t, int64_t, const LogUniform&, double, T*, \
                                                      T*, T*);
KGLM_FOR_STORAGE_TYPES(KGLM_SAMPLED_SOFTMAX_CUDA)
#undef KGLM_SAMPLED_SOFTMAX_CUDA

}  // namespace kglm::nn::cuda
