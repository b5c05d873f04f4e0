#include "nn/cpu_precision.hpp"

#include <atomic>
#include <fstream>

#include "core/error.hpp"

namespace kglm::nn {

namespace {
std::atomic<DType> gemm_dtype{DType::F32};
}  // namespace

void set_cpu_gemm_dtype(DType dtype) {
  if (dtype != DType::F32 && dtype != DType::BF16)
    throw Error("the CPU's matrix products run in F32 or BF16, not " + std::string(dtype_name(dtype)));
  if (dtype == DType::BF16) require_bf16_cpu(cpu_has_bf16(), cpu_model_name());
  gemm_dtype.store(dtype, std::memory_order_relaxed);
}

DType cpu_gemm_dtype() { return gemm_dtype.load(std::memory_order_relaxed); }

bool cpu_has_bf16() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512bf16") || __builtin_cpu_supports("amx-bf16");
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("model name")) {
      const auto colon = line.find(':');
      if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
    }
  }
  return "this CPU";
}

void require_bf16_cpu(bool has_bf16, const std::string& cpu) {
  if (!has_bf16)
    throw Error("--precision bf16 on the CPU needs AVX512_BF16 or AMX-BF16, which " + cpu +
                " lacks: use --precision fp32");
}

void use_precision(const std::string& precision, Device device) {
  if (precision == "fp32") {
    set_cpu_gemm_dtype(DType::F32);
    return;
  }
  if (precision != "bf16") throw UsageError("--precision must be fp32 or bf16, not '" + precision + "'");
  if (device == Device::Cuda) throw UsageError("--precision bf16 runs on the CPU; with --device cuda use fp32");
  set_cpu_gemm_dtype(DType::BF16);
}

}  // namespace kglm::nn
