#include "dist/comm_bench.hpp"

#include <chrono>

#include "core/error.hpp"
#include "nn/cuda/runtime.hpp"

namespace kglm::dist {

std::vector<AllReduceTiming> time_all_reduce(Communicator& comm, uint64_t min_bytes, uint64_t max_bytes,
                                             int iterations) {
  if (min_bytes < 4 || max_bytes < min_bytes || iterations < 1)
    throw UsageError("comm-bench: sizes from 4 bytes up, and at least one iteration");
  std::vector<AllReduceTiming> out;
  for (uint64_t bytes = min_bytes; bytes <= max_bytes; bytes *= 4) {
    nn::Tensor t = nn::Tensor::zeros({static_cast<int64_t>(bytes / 4)}, nn::DType::F32, comm.device());
    for (int k = 0; k < 2; ++k) comm.all_reduce(t, ReduceOp::Sum);
    comm.barrier();
    const auto start = std::chrono::steady_clock::now();
    for (int k = 0; k < iterations; ++k) comm.all_reduce(t, ReduceOp::Sum);
    if (comm.device() == nn::Device::Cuda) nn::cuda::synchronize();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iterations;
    std::vector<double> mean{seconds};
    comm.all_reduce(mean, ReduceOp::Average);  // every rank reports the same number
    out.push_back({bytes / 4 * 4, mean[0]});
  }
  return out;
}

AllReduceModel fit_all_reduce(const std::vector<AllReduceTiming>& timings) {
  if (timings.empty()) return {};
  const AllReduceTiming &small = timings.front(), &large = timings.back();
  const double transfer = large.seconds - small.seconds;
  return {small.seconds, transfer > 0 ? static_cast<double>(large.bytes - small.bytes) / transfer : 0.0};
}

}  // namespace kglm::dist
