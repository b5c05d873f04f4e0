#include "dist/gradient_buckets.hpp"

#include "core/error.hpp"

namespace kglm::dist {

GradientBuckets::GradientBuckets(Communicator& comm, nn::Tensor grads, int64_t bucket_elements)
    : comm_(comm), grads_(std::move(grads)), bucket_elements_(bucket_elements) {
  if (bucket_elements <= 0) throw Error("gradient buckets: the bucket size must be positive");
  if (grads_.device() != comm.device())
    throw Error(std::string("gradient buckets: the gradients are on the ") +
                std::string(nn::device_name(grads_.device())) + ", the " + std::string(comm.backend()) +
                " communicator's on the " + std::string(nn::device_name(comm.device())));
  for (int64_t end = grads_.numel(); end > 0; end -= bucket_elements)
    bounds_.push_back(std::max<int64_t>(0, end - bucket_elements));
}

void GradientBuckets::ready_from(int64_t offset) {
  while (started_ < bounds_.size() && bounds_[started_] >= offset) {
    const int64_t end = started_ == 0 ? grads_.numel() : bounds_[started_ - 1];
    nn::Tensor bucket = grads_.rows(bounds_[started_], end);
    comm_.start_all_reduce(bucket, ReduceOp::Sum);
    ++started_;
  }
}

void GradientBuckets::finish() {
  ready_from(0);
  comm_.wait_all();
  started_ = 0;
}

}  // namespace kglm::dist
