// The process's CUDA context (see runtime.hpp): the device, the stream every op is queued on, the
// cuBLASLt handle and its workspace, and the checks every CUDA call goes through. Private to
// lib/nn/cuda; includes the CUDA headers.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kglm::nn::cuda {

// Each throws kglm::Error "<op>: <what failed>: <CUDA's message>" unless the status is success.
void check(cudaError_t status, std::string_view op, std::string_view what);
void check(cublasStatus_t status, std::string_view op, std::string_view what);
// After a kernel launch: a bad launch configuration (or an earlier asynchronous fault) names `op`.
void check_launch(std::string_view op);

class Context {
 public:
  // The context of the current device, created on first use; throws when no GPU is available.
  static Context& get();

  cudaStream_t stream() const { return stream_; }
  cublasLtHandle_t lt() const { return lt_; }
  // cuBLASLt's workspace: split-K and stream-K gemms need scratch; without it cuBLASLt falls back
  // to slower kernels.
  void* gemm_workspace() const { return gemm_workspace_; }
  size_t gemm_workspace_bytes() const { return kGemmWorkspaceBytes; }
  int device() const { return device_; }
  int sm_count() const { return sm_count_; }
  int compute_capability() const { return compute_capability_; }
  const cudaDeviceProp& properties() const { return properties_; }

  // One 64-bit word of device memory for kernels that report a problem found in the data (an id
  // out of range): reset_word() sets it to `value` and returns its address, a kernel lowers it,
  // read_word() waits for the stream and returns it.
  unsigned long long* reset_word(unsigned long long value, std::string_view op);
  unsigned long long read_word(std::string_view op);

  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

 private:
  Context();
  static constexpr size_t kGemmWorkspaceBytes = size_t{32} << 20;  // NVIDIA's advice for Hopper

  int device_ = 0;
  int sm_count_ = 0;
  int compute_capability_ = 0;
  cudaDeviceProp properties_{};
  cudaStream_t stream_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  void* gemm_workspace_ = nullptr;
  unsigned long long* word_ = nullptr;       // device
  unsigned long long* host_word_ = nullptr;  // pinned host
};

}  // namespace kglm::nn::cuda
