// The CUDA runtime of a build without the backend: nothing is available, and every call that
// needs a GPU says so.
#include "nn/cuda/runtime.hpp"

#include "core/error.hpp"

namespace kglm::nn::cuda {

namespace {

[[noreturn]] void no_backend() { throw Error("cuda: " + unavailable_reason()); }

}  // namespace

bool built() { return false; }
bool available() { return false; }
std::string unavailable_reason() { return "this build has no CUDA backend (configure with nvcc on the PATH)"; }
std::string device_description() { no_backend(); }
int compute_capability() { no_backend(); }
int device_count() { return 0; }
void select_device(int) { no_backend(); }
std::shared_ptr<std::byte[]> allocate(size_t) { no_backend(); }
MemoryStats memory_stats() { return {}; }
void reset_peak_memory() {}
void release_cached_memory() {}
void copy(void*, const void*, size_t, Copy) { no_backend(); }
void fill_zero(void*, size_t) { no_backend(); }
void synchronize() {}

}  // namespace kglm::nn::cuda
