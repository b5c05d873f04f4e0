// The CUDA backend as the rest of kglm sees it: whether there is one, device memory, and copies
// between host and device. No CUDA header is needed to include this; in a build without the
// backend (runtime_none.cpp) every call that would touch a GPU throws kglm::Error.
//
// One process drives one GPU (MPI runs one rank per GPU), so the backend keeps one context per
// process: the current device, one stream that every op is queued on, the cuBLASLt handle and its
// workspace (context.hpp). Work on the stream runs in order, so memory freed by a tensor can be
// handed to the next allocation at once; copies to the host wait for the stream.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace kglm::nn::cuda {

// Whether this build has the CUDA backend (KGLM_CUDA found nvcc at configure time).
bool built();
// Whether a GPU can be used: built() and the driver reports a device. Never throws.
bool available();
// Why available() is false, in one line ("this build has no CUDA backend", "no CUDA device: ...").
std::string unavailable_reason();
// "NVIDIA H100 80GB HBM3 (sm_90, 79 GiB)" for the current device; throws when !available().
std::string device_description();
// The compute capability of the current device as 10·major + minor (70 for V100, 90 for H100).
int compute_capability();

// How many GPUs this process sees (0 without the backend or a device). Never throws.
int device_count();
// Makes GPU `index` this process's device (an MPI rank's, by its place among the ranks on its
// host): before any other GPU call, since the context is made once, on the current device.
void select_device(int index);
// Device memory from the caching allocator: freed blocks go back to a per-size cache, not to
// cudaFree, so the training loop does not call cudaMalloc once its shapes have been seen.
// Aligned to 256 bytes. Throws kglm::Error naming the size when the device is out of memory.
std::shared_ptr<std::byte[]> allocate(size_t bytes);

struct MemoryStats {
  size_t in_use = 0;    // bytes held by live tensors
  size_t peak = 0;      // the most in_use since the last reset_peak_memory()
  size_t reserved = 0;  // bytes obtained from cudaMalloc (in use + cached)
};
MemoryStats memory_stats();
void reset_peak_memory();
// Returns the cached blocks to the driver.
void release_cached_memory();

enum class Copy : uint8_t { HostToDevice, DeviceToHost, DeviceToDevice };
// Copies `bytes` bytes. Device-to-host waits for the stream (the host reads the result next);
// the other two are queued on the stream (the host source of a host-to-device copy may be reused
// as soon as the call returns).
void copy(void* dst, const void* src, size_t bytes, Copy kind);
// Queues a zero fill of `bytes` bytes of device memory.
void fill_zero(void* dst, size_t bytes);
// Waits until everything queued on the stream has run; throws the first asynchronous error.
void synchronize();

}  // namespace kglm::nn::cuda
