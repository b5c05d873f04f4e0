// Grow-only scratch buffers. A packed batch's token count and the masked-row count change every
// step, so activation shapes change from step to step; re-allocating hundreds of MB per step would
// cost page faults on the hot path. A Workspace hands out views into allocations
// that are only replaced when a layout needs more room.
#pragma once

#include <vector>

#include "nn/tensor.hpp"

namespace kglm::nn {

class Workspace {
 public:
  explicit Workspace(Device device = Device::Cpu) : device_(device) {}
  Device device() const { return device_; }

  // Starts a layout: the following buffer() calls take slots 0, 1, … again (views handed out
  // before stay valid until their slot has to grow).
  void begin() { next_ = 0; }
  // A [shape] view of the next slot on the workspace's device, uninitialised.
  Tensor buffer(Shape shape, DType dtype = DType::F32);

 private:
  Device device_;
  std::vector<Tensor> slots_;
  size_t next_ = 0;
};

}  // namespace kglm::nn
