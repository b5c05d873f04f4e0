#include "nn/threads.hpp"

#include <omp.h>

namespace kglm::nn {

// OpenBLAS itself stays on one thread: the CPU kernels split every gemm over the OpenMP threads
// (see nn/cpu/kernels.hpp), so this one number drives all of the backend.
void set_compute_threads(int threads) { omp_set_num_threads(threads < 1 ? 1 : threads); }

}  // namespace kglm::nn
