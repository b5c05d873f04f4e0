// The precision of the CPU backend's matrix products: `--precision bf16` on the CPU.
//
// F32 (the default): oneDNN's or OpenBLAS's sgemm (nn/cpu/linear_cpu.cpp). BF16: the two operands
// of every product large enough to gain (nn/cpu/gemm_bf16_cpu.cpp) are rounded to bfloat16 and
// multiplied by oneDNN's bf16 kernels (AMX tiles, or AVX512-BF16 dot products on CPUs without AMX),
// accumulating in fp32 into an fp32 result. Everything else stays fp32: activations, LayerNorm,
// softmax, losses, gradients, master weights and optimizer state (what PyTorch calls matmul
// precision "medium"). Process-wide, like the thread count: a tool sets it once from its options.
#pragma once

#include <string>

#include "nn/tensor.hpp"

namespace kglm::nn {

// F32 or BF16 (Error otherwise; BF16 also where the CPU cannot: require_bf16_cpu).
void set_cpu_gemm_dtype(DType dtype);
DType cpu_gemm_dtype();

// Whether this CPU has bf16 dot-product instructions (AVX512_BF16 or AMX-BF16).
bool cpu_has_bf16();
// The CPU's model name (/proc/cpuinfo), for messages.
std::string cpu_model_name();
// Error (one line, naming the CPU) unless `has_bf16`: bf16 products on a CPU without them would be
// emulated, slower than fp32.
void require_bf16_cpu(bool has_bf16, const std::string& cpu);

// --precision of the tools whose models compute in fp32 on CUDA (finetune, probe, pretrain embed,
// verbalize generate): fp32, or bf16 on the CPU (sets the CPU's gemm dtype). UsageError for other
// values and for bf16 with a CUDA device.
void use_precision(const std::string& precision, Device device);
inline constexpr const char* kPrecisionHelp =
    "fp32 (default) or bf16: the CPU's matrix products in bfloat16 with fp32 accumulation (AVX512_BF16 or AMX "
    "CPUs; everything else stays fp32)";

// Sets the CPU's gemm dtype for a scope and restores the previous one (tests).
class ScopedCpuGemmDType {
 public:
  explicit ScopedCpuGemmDType(DType dtype) : previous_(cpu_gemm_dtype()) { set_cpu_gemm_dtype(dtype); }
  ~ScopedCpuGemmDType() { set_cpu_gemm_dtype(previous_); }
  ScopedCpuGemmDType(const ScopedCpuGemmDType&) = delete;
  ScopedCpuGemmDType& operator=(const ScopedCpuGemmDType&) = delete;

 private:
  DType previous_;
};

}  // namespace kglm::nn
