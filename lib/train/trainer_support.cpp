#include "train/trainer_support.hpp"

#include <sys/resource.h>

#include <cmath>
#include <cstdio>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "nn/cpu_precision.hpp"
#include "nn/cuda/runtime.hpp"

namespace kglm::train {

double seconds_since(TrainClock::time_point t) { return std::chrono::duration<double>(TrainClock::now() - t).count(); }

bool held_out(uint32_t index, double fraction) {
  return fraction > 0 && Rng(0x6576616c, index, 0).uniform() < fraction;
}

nn::DType compute_dtype(const std::string& precision, nn::Device device) {
  if (precision == "fp32") {
    nn::set_cpu_gemm_dtype(nn::DType::F32);
    return nn::DType::F32;
  }
  if (precision != "bf16" && precision != "fp16")
    throw UsageError("--precision must be fp32, bf16 or fp16, not '" + precision + "'");
  if (device != nn::Device::Cuda) {
    // bf16 on the CPU: the products in bf16, the activations fp32 (nn/cpu_precision.hpp).
    if (precision == "fp16") throw UsageError("--precision fp16 needs --device cuda");
    nn::set_cpu_gemm_dtype(nn::DType::BF16);
    return nn::DType::F32;
  }
  require_precision_on_gpu(precision, nn::cuda::compute_capability(), nn::cuda::device_description());
  return precision == "bf16" ? nn::DType::BF16 : nn::DType::F16;
}

void require_precision_on_gpu(const std::string& precision, int compute_capability, const std::string& gpu) {
  if (precision == "bf16" && compute_capability < 80)
    throw Error("--precision bf16 needs an Ampere or newer GPU (sm_80+); " + gpu + " has sm_" +
                std::to_string(compute_capability) + ": use --precision fp16");
}

const PretrainOptions& on_usable_device(const PretrainOptions& o) {
  nn::require_device(o.device);
  return o;
}

uint64_t cache_bytes(double megabytes) {
  if (!(megabytes > 0)) throw UsageError("--cache-mb must be positive");
  return megabytes >= 1e12 ? UINT64_MAX : static_cast<uint64_t>(megabytes * (1 << 20));
}

void add_memory_stats(Stats& stats, nn::Device device) {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  stats.set("peak_rss_mb", static_cast<int64_t>(usage.ru_maxrss >> 10));  // Linux: kilobytes
  if (device == nn::Device::Cuda) {
    // Every tensor the run held at once on the GPU.
    stats.set("gpu_peak_mb", static_cast<int64_t>(nn::cuda::memory_stats().peak >> 20));
    stats.set("gpu_reserved_mb", static_cast<int64_t>(nn::cuda::memory_stats().reserved >> 20));
  }
}

void check_same(bool explicit_value_differs, const char* option) {
  if (explicit_value_differs)
    throw UsageError(std::string("--resume: ") + option +
                     " differs from the checkpoint's; a resumed run keeps the original settings");
}

}  // namespace kglm::train
