// The CUDA runtime of a build with the backend (runtime.hpp).
#include "nn/cuda/runtime.hpp"

#include <cuda_runtime.h>

#include "core/error.hpp"
#include "nn/cuda/allocator.hpp"
#include "nn/cuda/context.hpp"

namespace kglm::nn::cuda {

namespace {

// The driver's answer, asked once: cudaGetDeviceCount fails without a driver or a device.
struct Probe {
  bool ok = false;
  int count = 0;
  std::string reason;
};

const Probe& probe() {
  static const Probe result = [] {
    Probe p;
    int count = 0;
    const cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess) {
      cudaGetLastError();
      p.reason = std::string("no CUDA device: ") + cudaGetErrorString(status);
    } else if (count == 0) {
      p.reason = "no CUDA device";
    } else {
      p.ok = true;
      p.count = count;
    }
    return p;
  }();
  return result;
}

cudaMemcpyKind kind_of(Copy kind) {
  switch (kind) {
    case Copy::HostToDevice:
      return cudaMemcpyHostToDevice;
    case Copy::DeviceToHost:
      return cudaMemcpyDeviceToHost;
    case Copy::DeviceToDevice:
      break;
  }
  return cudaMemcpyDeviceToDevice;
}

}  // namespace

bool built() { return true; }
bool available() { return probe().ok; }
std::string unavailable_reason() { return probe().ok ? std::string() : probe().reason; }

std::string device_description() {
  const Context& c = Context::get();
  const cudaDeviceProp& p = c.properties();
  return std::string(p.name) + " (sm_" + std::to_string(c.compute_capability()) + ", " +
         std::to_string(p.totalGlobalMem >> 30) + " GiB)";
}

int compute_capability() { return Context::get().compute_capability(); }

int device_count() { return probe().count; }

void select_device(int index) {
  if (!available()) throw Error("cuda: " + unavailable_reason());
  if (index < 0 || index >= device_count())
    throw Error("cuda: no GPU " + std::to_string(index) + " on this host (it has " + std::to_string(device_count()) +
                ")");
  check(cudaSetDevice(index), "cuda", "cudaSetDevice");
  if (Context::get().device() != index)
    throw Error("cuda: GPU " + std::to_string(index) + " selected after the context was made on GPU " +
                std::to_string(Context::get().device()));
}

std::shared_ptr<std::byte[]> allocate(size_t bytes) {
  CachingAllocator& allocator = CachingAllocator::get();
  void* block = allocator.allocate(bytes);
  return std::shared_ptr<std::byte[]>(static_cast<std::byte*>(block),
                                      [bytes](std::byte* p) { CachingAllocator::get().release(p, bytes); });
}

MemoryStats memory_stats() { return CachingAllocator::get().stats(); }
void reset_peak_memory() { CachingAllocator::get().reset_peak(); }
void release_cached_memory() { CachingAllocator::get().release_cached(); }

void copy(void* dst, const void* src, size_t bytes, Copy kind) {
  if (bytes == 0) return;
  constexpr std::string_view op = "cuda copy";
  Context& c = Context::get();
  check(cudaMemcpyAsync(dst, src, bytes, kind_of(kind), c.stream()), op, "cudaMemcpyAsync");
  // A pageable host source has been staged when the call returns; a host destination is read next.
  if (kind == Copy::DeviceToHost) check(cudaStreamSynchronize(c.stream()), op, "cudaStreamSynchronize");
}

void fill_zero(void* dst, size_t bytes) {
  if (bytes == 0) return;
  Context& c = Context::get();
  check(cudaMemsetAsync(dst, 0, bytes, c.stream()), "cuda zero", "cudaMemsetAsync");
}

void synchronize() {
  if (!available()) return;
  check(cudaStreamSynchronize(Context::get().stream()), "cuda", "cudaStreamSynchronize");
}

}  // namespace kglm::nn::cuda
