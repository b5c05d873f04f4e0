#include "nn/threads.hpp"

#include <cblas.h>
#include <omp.h>

namespace kglm::nn {

void set_compute_threads(int threads) {
  if (threads < 1) threads = 1;
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
}

}  // namespace kglm::nn
