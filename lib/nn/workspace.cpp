#include "nn/workspace.hpp"

namespace kglm::nn {

Tensor Workspace::buffer(Shape shape, DType dtype) {
  if (next_ == slots_.size()) slots_.emplace_back();
  Tensor& slot = slots_[next_++];
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  if (!slot.defined() || slot.numel() < n || slot.dtype() != dtype) slot = Tensor::empty({n}, dtype, device_);
  return slot.rows(0, n).view(std::move(shape));
}

}  // namespace kglm::nn
