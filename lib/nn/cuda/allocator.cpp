#include "nn/cuda/allocator.hpp"

#include <algorithm>
#include <bit>
#include <string>

#include "core/error.hpp"
#include "nn/cuda/context.hpp"

namespace kglm::nn::cuda {

CachingAllocator& CachingAllocator::get() {
  static CachingAllocator* allocator = new CachingAllocator();  // outlives every tensor
  return *allocator;
}

size_t CachingAllocator::size_class(size_t bytes) {
  constexpr size_t kSmallStep = 256, kLarge = size_t{1} << 20;
  if (bytes == 0) bytes = 1;
  if (bytes <= kLarge) return (bytes + kSmallStep - 1) / kSmallStep * kSmallStep;
  // Four classes between 2^k and 2^(k+1): steps of 2^(k−2).
  const size_t step = std::bit_floor(bytes - 1) / 4;
  return (bytes + step - 1) / step * step;
}

void* CachingAllocator::allocate(size_t bytes) {
  constexpr std::string_view op = "cuda allocator";
  Context::get();  // selects the device and fails with a clear message when there is none
  const size_t size = size_class(bytes);
  std::lock_guard lock(mutex_);
  void* block = nullptr;
  if (auto it = free_.find(size); it != free_.end() && !it->second.empty()) {
    block = it->second.back();
    it->second.pop_back();
  } else {
    cudaError_t status = cudaMalloc(&block, size);
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      release_cached_locked();
      status = cudaMalloc(&block, size);
    }
    if (status == cudaErrorMemoryAllocation) {
      cudaGetLastError();
      throw Error(std::string(op) + ": out of GPU memory allocating " + std::to_string(size >> 20) + " MiB (" +
                  std::to_string(stats_.in_use >> 20) + " MiB in use)");
    }
    check(status, op, "cudaMalloc");
    stats_.reserved += size;
  }
  stats_.in_use += size;
  stats_.peak = std::max(stats_.peak, stats_.in_use);
  return block;
}

void CachingAllocator::release(void* block, size_t bytes) {
  const size_t size = size_class(bytes);
  std::lock_guard lock(mutex_);
  free_[size].push_back(block);
  stats_.in_use -= size;
}

MemoryStats CachingAllocator::stats() {
  std::lock_guard lock(mutex_);
  return stats_;
}

void CachingAllocator::reset_peak() {
  std::lock_guard lock(mutex_);
  stats_.peak = stats_.in_use;
}

void CachingAllocator::release_cached() {
  std::lock_guard lock(mutex_);
  release_cached_locked();
}

void CachingAllocator::release_cached_locked() {
  // cudaFree waits for the device, so queued kernels still using a cached block finish first.
  for (auto& [size, blocks] : free_) {
    for (void* block : blocks) {
      cudaFree(block);
      stats_.reserved -= size;
    }
    blocks.clear();
  }
}

}  // namespace kglm::nn::cuda
