// Softmax cross-entropy, one block per row: the row's maximum (and its first position, as
// torch.argmax), then Σ exp(x − max), then the gradient written in the same pass that reads the
// logits a last time. Row losses are summed on the host in row order, as on the CPU.
#include <cfloat>
#include <vector>

#include "nn/cuda/common.cuh"
#include "nn/cuda/kernels.hpp"

namespace kglm::nn::cuda {

namespace {

// (value, position) maximum with the smaller position on ties: the first maximum.
struct ArgMax {
  float value;
  int64_t position;
};

__device__ inline ArgMax better(ArgMax a, ArgMax b) {
  if (b.value > a.value || (b.value == a.value && b.position < a.position)) return b;
  return a;
}

__device__ inline ArgMax block_argmax(ArgMax v, ArgMax* scratch) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  for (int offset = 16; offset > 0; offset /= 2) {
    ArgMax other{__shfl_xor_sync(0xffffffffu, v.value, offset), __shfl_xor_sync(0xffffffffu, v.position, offset)};
    v = better(v, other);
  }
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  ArgMax total = lane < warps ? scratch[lane] : ArgMax{-FLT_MAX, INT64_MAX};
  for (int offset = 16; offset > 0; offset /= 2) {
    ArgMax other{__shfl_xor_sync(0xffffffffu, total.value, offset),
                 __shfl_xor_sync(0xffffffffu, total.position, offset)};
    total = better(total, other);
  }
  __syncthreads();
  return total;
}

// A row's first maximum and Σ exp(x − max), reduced over the block.
struct RowStats {
  ArgMax max;
  float sum;
};

template <class T>
__device__ inline RowStats row_stats(const T* x, int64_t c, ArgMax* arg_scratch, float* sum_scratch) {
  ArgMax local{-FLT_MAX, INT64_MAX};
  for (int64_t j = threadIdx.x; j < c; j += blockDim.x) local = better(local, ArgMax{to_float(x[j]), j});
  const ArgMax max = block_argmax(local, arg_scratch);
  float sum = 0;
  for (int64_t j = threadIdx.x; j < c; j += blockDim.x) sum += expf(to_float(x[j]) - max.value);
  return {max, block_sum(sum, sum_scratch)};
}

template <class T>
__global__ void cross_entropy_kernel(const T* logits, const int32_t* targets, int64_t c, T* dlogits, double grad_scale,
                                     const double* row_weights, double* loss, uint8_t* correct) {
  __shared__ ArgMax arg_scratch[32];
  __shared__ float sum_scratch[32];
  const int64_t r = blockIdx.x;
  const T* x = logits + r * c;
  T* g = dlogits ? dlogits + r * c : nullptr;
  const int32_t t = targets[r];
  if (t == kIgnoreIndex) {
    if (g)
      for (int64_t j = threadIdx.x; j < c; j += blockDim.x) g[j] = from_float<T>(0.0f);
    if (threadIdx.x == 0) {
      loss[r] = 0;
      correct[r] = 0;
    }
    return;
  }
  // Read before any thread writes the gradient, which may be the logits themselves (the barriers
  // of the reductions below separate the two).
  const float target = to_float(x[t]);
  const auto [max, sum] = row_stats(x, c, arg_scratch, sum_scratch);
  if (threadIdx.x == 0) {
    loss[r] = static_cast<double>(max.value) + log(static_cast<double>(sum)) - static_cast<double>(target);
    correct[r] = max.position == t;
  }
  if (g) {
    const double scale = row_weights ? grad_scale * row_weights[r] : grad_scale;
    const float s = static_cast<float>(scale / sum);
    const float hit = static_cast<float>(scale);
    // The target's element: subtract after scaling, as the CPU does (same rounding).
    for (int64_t j = threadIdx.x; j < c; j += blockDim.x) {
      const float p = expf(to_float(x[j]) - max.value) * s;
      g[j] = from_float<T>(j == t ? p - hit : p);
    }
  }
}

template <class T>
__global__ void best_classes_kernel(const T* logits, int64_t c, int32_t* classes, double* log_probs) {
  __shared__ ArgMax arg_scratch[32];
  __shared__ float sum_scratch[32];
  const int64_t r = blockIdx.x;
  const auto [max, sum] = row_stats(logits + r * c, c, arg_scratch, sum_scratch);
  if (threadIdx.x == 0) {
    classes[r] = static_cast<int32_t>(max.position);
    log_probs[r] = -log(static_cast<double>(sum));
  }
}

}  // namespace

template <class T>
void best_classes(const T* logits, int64_t m, int64_t c, int32_t* classes, double* log_probs) {
  constexpr std::string_view op = "best_classes";
  if (m == 0) return;
  Context& context = Context::get();
  DeviceBuffer<int32_t> device_classes(m);
  DeviceBuffer<double> device_log_probs(m);
  best_classes_kernel<<<static_cast<unsigned>(m), 1024, 0, context.stream()>>>(native(logits), c, device_classes.get(),
                                                                               device_log_probs.get());
  check_launch(op);
  read_back(device_classes.get(), classes, m, op);
  read_back(device_log_probs.get(), log_probs, m, op);
}

#define KGLM_BEST_CLASSES_CUDA(T) template void best_classes<T>(const T*, int64_t, int64_t, int32_t*, double*);
KGLM_FOR_STORAGE_TYPES(KGLM_BEST_CLASSES_CUDA)
#undef KGLM_BEST_CLASSES_CUDA

template <class T>
CrossEntropyResult cross_entropy(const T* logits, const int32_t* targets, int64_t m, int64_t c, T* dlogits,
                                 double grad_scale, const double* row_weights, double* row_losses) {
  constexpr std::string_view op = "cross_entropy";
  if (m == 0) return {};
  Context& context = Context::get();
  DeviceBuffer<double> loss(m);
  DeviceBuffer<uint8_t> correct(m);
  cross_entropy_kernel<<<static_cast<unsigned>(m), 1024, 0, context.stream()>>>(
      native(logits), targets, c, native(dlogits), grad_scale, row_weights, loss.get(), correct.get());
  check_launch(op);
  if (row_losses)
    check(cudaMemcpyAsync(row_losses, loss.get(), m * sizeof(double), cudaMemcpyDeviceToDevice, context.stream()), op,
          "cudaMemcpyAsync");
  std::vector<double> host_loss(m);
  std::vector<uint8_t> host_correct(m);
  std::vector<int32_t> host_targets(m);
  read_back(loss.get(), host_loss.data(), m, op);
  read_back(correct.get(), host_correct.data(), m, op);
  read_back(targets, host_targets.data(), m, op);
  return sum_row_results(host_targets.data(), host_loss.data(), host_correct.data(), m);
}

#define KGLM_CROSS_ENTROPY_CUDA(T)                                                                                    \
  template CrossEntropyResult cross_entropy<T>(const T*, const int32_t*, int64_t, int64_t, T*, double, const double*, \
                                               double*);
KGLM_FOR_STORAGE_TYPES(KGLM_CROSS_ENTROPY_CUDA)
#undef KGLM_CROSS_ENTROPY_CUDA

}  // namespace kglm::nn::cuda
