// The caching allocator behind Tensor's device memory (see runtime.hpp). Private to lib/nn/cuda.
//
// Requests are rounded up to size classes (256-byte multiples below 1 MiB; above, four classes per
// power of two, so at most 25% is wasted) and a freed block waits in its class's list for the next
// request of that class. Batches change shape every step (dynamic padding), but the classes repeat,
// so after the first steps every allocation is a cache hit. All work is on the one stream, in
// order, so a block freed by the host can be reused at once. When cudaMalloc fails, the cache is
// released and the call retried once.
#pragma once

#include <cstddef>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "nn/cuda/runtime.hpp"

namespace kglm::nn::cuda {

class CachingAllocator {
 public:
  static CachingAllocator& get();

  void* allocate(size_t bytes);
  void release(void* block, size_t bytes);  // `bytes` as requested from allocate()
  MemoryStats stats();
  void reset_peak();
  void release_cached();

  // The size class of a request (exposed for the tests).
  static size_t size_class(size_t bytes);

 private:
  void release_cached_locked();

  std::mutex mutex_;
  std::unordered_map<size_t, std::vector<void*>> free_;  // size class → cached blocks
  MemoryStats stats_;
};

}  // namespace kglm::nn::cuda
