// Shared device helpers of the CUDA kernels (private to lib/nn/cuda).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string_view>
#include <type_traits>

#include "nn/cuda/context.hpp"
#include "nn/cuda/kernels.hpp"
#include "nn/cuda/runtime.hpp"

namespace kglm::nn::cuda {

// The CUDA type behind a storage tag of kernels.hpp (float stays float).
template <class T>
struct NativeType {
  using type = T;
};
template <>
struct NativeType<Bf16> {
  using type = __nv_bfloat16;
};
template <>
struct NativeType<Half> {
  using type = __half;
};
template <class T>
using native_t = typename NativeType<T>::type;

// A tag-typed pointer as its CUDA type (the same bits: the tags are the types' bit patterns).
template <class T>
native_t<T>* native(T* p) {
  return reinterpret_cast<native_t<T>*>(p);
}
template <class T>
const native_t<T>* native(const T* p) {
  return reinterpret_cast<const native_t<T>*>(p);
}

// fp32 to and from a storage type, inside kernels (round to nearest even; exact for float).
template <class T>
__device__ inline T from_float(float v) {
  if constexpr (std::is_same_v<T, float>) {
    return v;
  } else if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(v);
  } else {
    return __float2bfloat16_rn(v);
  }
}
__device__ inline float to_float(float v) { return v; }
__device__ inline float to_float(__half v) { return __half2float(v); }
__device__ inline float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }

// Instantiates M(T) for every storage type.
#define KGLM_FOR_STORAGE_TYPES(M) M(float) M(Bf16) M(Half)

inline constexpr int kThreads = 256;  // threads per block of the elementwise and row kernels

// Blocks for an elementwise kernel over n items: enough to fill the GPU a few times over, capped
// so that grid-stride loops cover the rest.
inline unsigned elementwise_blocks(int64_t n, int threads = kThreads) {
  const int64_t wanted = (n + threads - 1) / threads;
  const int64_t cap = int64_t{Context::get().sm_count()} * 32;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(wanted, cap)));
}

// Launches an elementwise (grid-stride) kernel over n items on the context's stream.
template <class... Params, class... Args>
void launch_elementwise(void (*kernel)(Params...), std::string_view op, int64_t n, Args... args) {
  if (n == 0) return;
  kernel<<<elementwise_blocks(n), kThreads, 0, Context::get().stream()>>>(args...);
  check_launch(op);
}

// Scratch memory of `count` T from the caching allocator, returned to it when the buffer goes out
// of scope (at once: later kernels on the stream are queued after the ones that use it).
template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(int64_t count) : memory_(allocate(static_cast<size_t>(count) * sizeof(T))) {}
  T* get() const { return reinterpret_cast<T*>(memory_.get()); }

 private:
  std::shared_ptr<std::byte[]> memory_;
};

// Copies `count` T from the device to the host, waiting for the stream.
template <class T>
void read_back(const T* device, T* host, int64_t count, std::string_view op) {
  Context& c = Context::get();
  check(cudaMemcpyAsync(host, device, static_cast<size_t>(count) * sizeof(T), cudaMemcpyDeviceToHost, c.stream()), op,
        "cudaMemcpyAsync");
  check(cudaStreamSynchronize(c.stream()), op, "cudaStreamSynchronize");
}

// Grid-stride loop index helpers.
__device__ inline int64_t global_thread() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ inline int64_t grid_threads() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// Sum over a warp; every lane gets the total (a fixed butterfly: the same order every run).
template <class T>
__device__ inline T warp_sum(T v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}
template <class T>
__device__ inline T warp_max(T v) {
  for (int offset = 16; offset > 0; offset /= 2) v = max(v, __shfl_xor_sync(0xffffffffu, v, offset));
  return v;
}

// Sum over the block (blockDim.x a multiple of 32, at most 1024); every thread gets the total.
// `scratch` holds 32 values; the call ends with a barrier, so it can be reused at once.
template <class T>
__device__ inline T block_sum(T v, T* scratch) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  v = warp_sum(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  T total = lane < warps ? scratch[lane] : T(0);
  total = warp_sum(total);
  __syncthreads();
  return total;
}
template <class T>
__device__ inline T block_max(T v, T* scratch, T lowest) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  v = warp_max(v);
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  T total = lane < warps ? scratch[lane] : lowest;
  total = warp_max(total);
  __syncthreads();
  return total;
}

}  // namespace kglm::nn::cuda
