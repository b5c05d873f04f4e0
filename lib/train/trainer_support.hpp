// What pretrain's two trainers (the masked LM's, train/trainer.hpp, and ELMo's,
// train/elmo_trainer.hpp) share: how they check their settings and pick held-out sequences (numbers
// of the metrics log: json_number, core/json_writer.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "core/stats.hpp"
#include "nn/tensor.hpp"
#include "train/pretrain.hpp"

namespace kglm::train {

using TrainClock = std::chrono::steady_clock;
double seconds_since(TrainClock::time_point t);

// Held-out sequences are chosen by a hash of their index alone, so every run on the same dataset
// (any seed, resumed or not) evaluates on the same ones.
bool held_out(uint32_t index, double fraction);

// The compute dtype of --precision, checked against the device: mixed precision runs on CUDA, and
// bf16 products need Ampere (sm_80) or newer there. On the CPU bf16 sets the CPU's gemm dtype
// (nn/cpu_precision.hpp: needs AVX512_BF16 or AMX) and the compute dtype stays F32; fp16 is CUDA's.
nn::DType compute_dtype(const std::string& precision, nn::Device device);
// Its GPU half: Error for bf16 on a GPU below sm_80 (a V100: its cuBLAS has no bf16 products),
// naming the GPU and its compute capability. The GPU decides, not the build: a binary built for
// sm_70 also runs on newer GPUs, where bf16 works.
void require_precision_on_gpu(const std::string& precision, int compute_capability, const std::string& gpu);

// The options, once their device is known to be usable: checked before the dataset is read.
const PretrainOptions& on_usable_device(const PretrainOptions& o);

// --cache-mb as bytes (UsageError unless positive).
uint64_t cache_bytes(double megabytes);

// The process's peak resident memory (peak_rss_mb) and, on CUDA, the caching allocator's high-water
// mark and reservation (gpu_peak_mb, gpu_reserved_mb).
void add_memory_stats(Stats& stats, nn::Device device);

// --resume: a UsageError naming `option` when its explicit value differs from the checkpoint's.
void check_same(bool explicit_value_differs, const char* option);

}  // namespace kglm::train
