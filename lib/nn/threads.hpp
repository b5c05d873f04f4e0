// The CPU backend's thread count: OpenMP loops and OpenBLAS gemms use the same number.
#pragma once

namespace kglm::nn {

void set_compute_threads(int threads);

}  // namespace kglm::nn
