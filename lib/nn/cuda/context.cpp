#include "nn/cuda/context.hpp"

#include <string>

#include "core/error.hpp"
#include "nn/cuda/runtime.hpp"

namespace kglm::nn::cuda {

void check(cudaError_t status, std::string_view op, std::string_view what) {
  if (status == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so that the next call does not report it again
  throw Error(std::string(op) + ": " + std::string(what) + ": " + cudaGetErrorString(status) + " (" +
              cudaGetErrorName(status) + ")");
}

void check(cublasStatus_t status, std::string_view op, std::string_view what) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  throw Error(std::string(op) + ": " + std::string(what) + ": " + cublasGetStatusString(status) + " (" +
              cublasGetStatusName(status) + ")");
}

void check_launch(std::string_view op) { check(cudaGetLastError(), op, "kernel launch"); }

Context& Context::get() {
  // Never destroyed: tensors freed during static destruction still return their blocks to the
  // allocator, which queues nothing on the stream; the driver reclaims everything at exit.
  static Context* context = new Context();
  return *context;
}

Context::Context() {
  constexpr std::string_view op = "cuda";
  if (!available()) throw Error("cuda: " + unavailable_reason());
  check(cudaGetDevice(&device_), op, "cudaGetDevice");
  check(cudaGetDeviceProperties(&properties_, device_), op, "cudaGetDeviceProperties");
  sm_count_ = properties_.multiProcessorCount;
  compute_capability_ = properties_.major * 10 + properties_.minor;
  check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), op, "cudaStreamCreate");
  check(cublasLtCreate(&lt_), op, "cublasLtCreate");
  check(cudaMalloc(&gemm_workspace_, kGemmWorkspaceBytes), op, "cudaMalloc of the cuBLASLt workspace");
  check(cudaMalloc(&word_, sizeof(unsigned long long)), op, "cudaMalloc");
  check(cudaMallocHost(&host_word_, sizeof(unsigned long long)), op, "cudaMallocHost");
}

unsigned long long* Context::reset_word(unsigned long long value, std::string_view op) {
  // From pageable memory: the call returns once `value` has been read (a pinned source could still
  // be pending when the next reset rewrites it).
  check(cudaMemcpyAsync(word_, &value, sizeof value, cudaMemcpyHostToDevice, stream_), op, "cudaMemcpyAsync");
  return word_;
}

unsigned long long Context::read_word(std::string_view op) {
  check(cudaMemcpyAsync(host_word_, word_, sizeof *host_word_, cudaMemcpyDeviceToHost, stream_), op, "cudaMemcpyAsync");
  check(cudaStreamSynchronize(stream_), op, "cudaStreamSynchronize");
  return *host_word_;
}

}  // namespace kglm::nn::cuda
