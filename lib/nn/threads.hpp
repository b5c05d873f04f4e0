// The CPU backend's thread count (OpenMP threads; the gemms are split over them too).
#pragma once

namespace kglm::nn {

void set_compute_threads(int threads);

}  // namespace kglm::nn
