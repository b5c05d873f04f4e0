// Data-parallel gradient reduction: the flat gradient buffer cut into fixed-size buckets from its
// end (the backward pass finishes the last parameters first), each summed across ranks as soon as
// the backward pass has finished it, in the same order on every rank. With NCCL the buckets are
// reduced on a communication stream while the GPU computes the rest of the backward pass; with
// MPI they are non-blocking collectives completed in finish().
#pragma once

#include <cstdint>
#include <vector>

#include "dist/communicator.hpp"

namespace kglm::dist {

class GradientBuckets {
 public:
  // grads: the flat F32 gradients (on comm.device()); bucket_elements > 0.
  GradientBuckets(Communicator& comm, nn::Tensor grads, int64_t bucket_elements);

  // Every gradient at flat offset ≥ `offset` is final: starts each bucket wholly at or above it
  // that has not started yet.
  void ready_from(int64_t offset);
  // Starts the buckets not yet started and completes them all; the next pass starts over.
  void finish();

  size_t buckets() const { return bounds_.size(); }
  int64_t bucket_elements() const { return bucket_elements_; }

 private:
  Communicator& comm_;
  nn::Tensor grads_;
  int64_t bucket_elements_;
  std::vector<int64_t> bounds_;  // bucket k is [bounds_[k], previous bound or the end), top down
  size_t started_ = 0;
};

}  // namespace kglm::dist
