// Row gather and scatter-add: the embedding lookup and its backward, and gather/scatter_add_rows.
//
// The scatter-add is deterministic without float atomics: the (index, row) pairs are sorted by
// index with CUB's stable radix sort, so each index's rows stay in row order; then one warp per
// run of equal indices adds the run's rows into dsrc in that order. That is the CPU's order of
// additions, so the results are bit-identical to it.
#include <cub/device/device_radix_sort.cuh>

#include "nn/cuda/common.cuh"
#include "nn/cuda/kernels.hpp"

namespace kglm::nn::cuda {

namespace {

template <class T>
__global__ void gather_rows_kernel(const int32_t* index, int64_t m, const T* src, int64_t h, T* out, bool accumulate) {
  const int64_t total = m * h;
  for (int64_t e = global_thread(); e < total; e += grid_threads()) {
    const int64_t i = e / h, j = e % h;
    const T v = src[static_cast<int64_t>(index[i]) * h + j];
    out[e] = accumulate ? from_float<T>(to_float(out[e]) + to_float(v)) : v;
  }
}

__global__ void iota_kernel(int32_t* rows, int64_t m) {
  for (int64_t i = global_thread(); i < m; i += grid_threads()) rows[i] = static_cast<int32_t>(i);
}

// One warp per sorted position p that starts a run of equal indices; its lanes take columns
// [column0, column0 + 32·kColumnsPerLane) and walk the run in order, summing in fp32 (G, the
// destination, is T or float: a parameter gradient).
constexpr int kColumnsPerLane = 4;
constexpr int kWarpsPerBlock = kThreads / 32;

template <class T, class G>
__global__ void scatter_runs_kernel(const int32_t* sorted_index, const int32_t* sorted_rows, int64_t m, const T* dout,
                                    int64_t h, G* dsrc) {
  const int64_t p = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  if (p >= m) return;
  const int32_t id = sorted_index[p];
  if (p > 0 && sorted_index[p - 1] == id) return;  // not the start of a run
  const int lane = threadIdx.x % 32;
  const int64_t column0 = static_cast<int64_t>(blockIdx.y) * 32 * kColumnsPerLane;
  G* to = dsrc + static_cast<int64_t>(id) * h;
  float acc[kColumnsPerLane];
  for (int c = 0; c < kColumnsPerLane; ++c) {
    const int64_t j = column0 + c * 32 + lane;
    acc[c] = j < h ? to_float(to[j]) : 0.0f;
  }
  for (int64_t q = p; q < m && sorted_index[q] == id; ++q) {
    const T* from = dout + static_cast<int64_t>(sorted_rows[q]) * h;
    for (int c = 0; c < kColumnsPerLane; ++c) {
      const int64_t j = column0 + c * 32 + lane;
      if (j < h) acc[c] += to_float(from[j]);
    }
  }
  for (int c = 0; c < kColumnsPerLane; ++c) {
    const int64_t j = column0 + c * 32 + lane;
    if (j < h) to[j] = from_float<G>(acc[c]);
  }
}

}  // namespace

template <class T>
void gather_rows(const int32_t* index, int64_t m, const T* src, int64_t h, T* out, bool accumulate) {
  if (m == 0 || h == 0) return;
  gather_rows_kernel<<<elementwise_blocks(m * h), kThreads, 0, Context::get().stream()>>>(index, m, native(src), h,
                                                                                          native(out), accumulate);
  check_launch("gather_rows");
}

template <class T, class G>
void scatter_add_rows(const int32_t* index, int64_t m, const T* dout, int64_t n, int64_t h, G* dsrc) {
  constexpr std::string_view op = "scatter_add_rows";
  if (m == 0 || h == 0) return;
  Context& c = Context::get();
  DeviceBuffer<int32_t> rows(m), sorted_index(m), sorted_rows(m);
  iota_kernel<<<elementwise_blocks(m), kThreads, 0, c.stream()>>>(rows.get(), m);
  check_launch(op);
  // Only the bits that can differ between indices in [0, n) take part in the sort.
  int end_bit = 1;
  while (end_bit < 31 && (int64_t{1} << end_bit) < n) ++end_bit;
  size_t temp_bytes = 0;
  check(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, index, sorted_index.get(), rows.get(), sorted_rows.get(),
                                        m, 0, end_bit, c.stream()),
        op, "cub::DeviceRadixSort");
  DeviceBuffer<std::byte> temp(static_cast<int64_t>(temp_bytes));
  check(cub::DeviceRadixSort::SortPairs(temp.get(), temp_bytes, index, sorted_index.get(), rows.get(),
                                        sorted_rows.get(), m, 0, end_bit, c.stream()),
        op, "cub::DeviceRadixSort");
  const dim3 grid(static_cast<unsigned>((m + kWarpsPerBlock - 1) / kWarpsPerBlock),
                  static_cast<unsigned>((h + 32 * kColumnsPerLane - 1) / (32 * kColumnsPerLane)));
  scatter_runs_kernel<<<grid, kThreads, 0, c.stream()>>>(sorted_index.get(), sorted_rows.get(), m, native(dout), h,
                                                         native(dsrc));
  check_launch(op);
}

#define KGLM_EMBEDDING_CUDA(T)                                                        \
  template void gather_rows<T>(const int32_t*, int64_t, const T*, int64_t, T*, bool); \
  template void scatter_add_rows<T, float>(const int32_t*, int64_t, const T*, int64_t, int64_t, float*);
KGLM_FOR_STORAGE_TYPES(KGLM_EMBEDDING_CUDA)
#undef KGLM_EMBEDDING_CUDA
// Half-precision rows into half-precision rows (a head's input gradient into the hidden states').
template void scatter_add_rows<Bf16, Bf16>(const int32_t*, int64_t, const Bf16*, int64_t, int64_t, Bf16*);
template void scatter_add_rows<Half, Half>(const int32_t*, int64_t, const Half*, int64_t, int64_t, Half*);

}  // namespace kglm::nn::cuda
