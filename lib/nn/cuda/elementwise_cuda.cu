// Elementwise arithmetic between the layers (fp32 arithmetic, stored in T), dtype conversions, and
// the squared norm for gradient clipping.
#include <vector>

#include "nn/cuda/common.cuh"
#include "nn/cuda/kernels.hpp"

namespace kglm::nn::cuda {

namespace {

// sum_of_squares: a fixed number of blocks, each summing a fixed grid-stride subset in double,
// then the block sums added in order on the host: the result depends on n only.
constexpr int kSumBlocks = 512;

template <class T>
__global__ void add_kernel(const T* a, const T* b, T* out, int64_t n) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) out[i] = from_float<T>(to_float(a[i]) + to_float(b[i]));
}

template <class T>
__global__ void multiply_kernel(const T* a, const T* b, T* out, int64_t n) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) out[i] = from_float<T>(to_float(a[i]) * to_float(b[i]));
}

template <class T>
__global__ void copy_rows_strided_kernel(const T* src, int64_t m, int64_t h, T* dst, int64_t first, int64_t stride) {
  for (int64_t e = global_thread(); e < m * h; e += grid_threads()) {
    const int64_t i = e / h, j = e % h;
    dst[(first + i * stride) * h + j] = src[e];
  }
}

template <class T>
__global__ void accumulate_kernel(T* acc, const T* x, int64_t n) {
  for (int64_t i = global_thread(); i < n; i += grid_threads())
    acc[i] = from_float<T>(to_float(acc[i]) + to_float(x[i]));
}

// s rounded to float, as the CPU's float kernel multiplies by static_cast<float>(s).
template <class T>
__global__ void scale_kernel(T* x, float s, int64_t n) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) x[i] = from_float<T>(to_float(x[i]) * s);
}

template <class From, class To>
__global__ void convert_kernel(const From* x, To* out, int64_t n) {
  for (int64_t i = global_thread(); i < n; i += grid_threads()) out[i] = from_float<To>(to_float(x[i]));
}

template <class T>
__global__ void sum_of_squares_kernel(const T* x, int64_t n, double* partial) {
  __shared__ double scratch[32];
  double s = 0;
  for (int64_t i = global_thread(); i < n; i += grid_threads()) {
    const double v = to_float(x[i]);
    s += v * v;
  }
  s = block_sum(s, scratch);
  if (threadIdx.x == 0) partial[blockIdx.x] = s;
}

constexpr int64_t kChunkRows = 64;  // rows per partial of add_column_sums

// partial[chunk, j] = Σ x[r, j] over the chunk's rows, in row order (one thread per column).
template <class T>
__global__ void column_partials_kernel(const T* x, int64_t n, int64_t h, float* partial) {
  const int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= h) return;
  const int64_t first = static_cast<int64_t>(blockIdx.y) * kChunkRows, last = min(n, first + kChunkRows);
  float s = 0;
  for (int64_t r = first; r < last; ++r) s += to_float(x[r * h + j]);
  partial[blockIdx.y * h + j] = s;
}

__global__ void add_partials_kernel(const float* partial, int64_t chunks, int64_t h, float* out) {
  const int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= h) return;
  float s = 0;
  for (int64_t c = 0; c < chunks; ++c) s += partial[c * h + j];
  out[j] += s;
}

}  // namespace

template <class T>
void add_column_sums(const T* x, int64_t n, int64_t h, float* out) {
  constexpr std::string_view op = "column sums";
  if (n == 0 || h == 0) return;
  Context& c = Context::get();
  const int64_t chunks = (n + kChunkRows - 1) / kChunkRows;
  DeviceBuffer<float> partial(chunks * h);
  const unsigned column_blocks = static_cast<unsigned>((h + kThreads - 1) / kThreads);
  column_partials_kernel<<<dim3(column_blocks, static_cast<unsigned>(chunks)), kThreads, 0, c.stream()>>>(
      native(x), n, h, partial.get());
  check_launch(op);
  add_partials_kernel<<<column_blocks, kThreads, 0, c.stream()>>>(partial.get(), chunks, h, out);
  check_launch(op);
}

template <class T>
void add(const T* a, const T* b, T* out, int64_t n) {
  if (n == 0) return;
  add_kernel<<<elementwise_blocks(n), kThreads, 0, Context::get().stream()>>>(native(a), native(b), native(out), n);
  check_launch("add");
}

template <class T>
void multiply(const T* a, const T* b, T* out, int64_t n) {
  launch_elementwise(multiply_kernel<native_t<T>>, "multiply", n, native(a), native(b), native(out), n);
}

template <class T>
void copy_rows_strided(const T* src, int64_t m, int64_t h, T* dst, int64_t first, int64_t stride) {
  launch_elementwise(copy_rows_strided_kernel<native_t<T>>, "copy_rows_strided", m * h, native(src), m, h, native(dst),
                     first, stride);
}

template <class T>
void accumulate(T* acc, const T* x, int64_t n) {
  if (n == 0) return;
  accumulate_kernel<<<elementwise_blocks(n), kThreads, 0, Context::get().stream()>>>(native(acc), native(x), n);
  check_launch("accumulate");
}

template <class T>
void scale(T* x, double s, int64_t n) {
  if (n == 0) return;
  scale_kernel<<<elementwise_blocks(n), kThreads, 0, Context::get().stream()>>>(native(x), static_cast<float>(s), n);
  check_launch("scale");
}

template <class T>
double sum_of_squares(const T* x, int64_t n) {
  constexpr std::string_view op = "sum_of_squares";
  if (n == 0) return 0;
  DeviceBuffer<double> partial(kSumBlocks);
  sum_of_squares_kernel<<<kSumBlocks, kThreads, 0, Context::get().stream()>>>(native(x), n, partial.get());
  check_launch(op);
  std::vector<double> host(kSumBlocks);
  read_back(partial.get(), host.data(), kSumBlocks, op);
  double total = 0;
  for (double s : host) total += s;
  return total;
}

template <class From, class To>
void convert(const From* x, To* out, int64_t n) {
  if (n == 0) return;
  convert_kernel<<<elementwise_blocks(n), kThreads, 0, Context::get().stream()>>>(native(x), native(out), n);
  check_launch("convert");
}

#define KGLM_ELEMENTWISE_CUDA(T)                                                        \
  template void add<T>(const T*, const T*, T*, int64_t);                                \
  template void multiply<T>(const T*, const T*, T*, int64_t);                           \
  template void copy_rows_strided<T>(const T*, int64_t, int64_t, T*, int64_t, int64_t); \
  template void accumulate<T>(T*, const T*, int64_t);                                   \
  template void scale<T>(T*, double, int64_t);                                          \
  template double sum_of_squares<T>(const T*, int64_t);                                 \
  template void add_column_sums<T>(const T*, int64_t, int64_t, float*);
KGLM_FOR_STORAGE_TYPES(KGLM_ELEMENTWISE_CUDA)
#undef KGLM_ELEMENTWISE_CUDA
#define KGLM_CONVERT_CUDA(T)                                  \
  template void convert<float, T>(const float*, T*, int64_t); \
  template void convert<T, float>(const T*, float*, int64_t);
KGLM_CONVERT_CUDA(Bf16)
KGLM_CONVERT_CUDA(Half)
#undef KGLM_CONVERT_CUDA

}  // namespace kglm::nn::cuda
