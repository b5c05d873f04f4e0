// The communicator of a run with one rank: every collective leaves its data as it is (the sum or
// average over one rank), so the trainer needs no "if distributed" branches.
#pragma once

#include "dist/communicator.hpp"

namespace kglm::dist {

class SingleCommunicator final : public Communicator {
 public:
  explicit SingleCommunicator(nn::Device device) : device_(device) {}

  int rank() const override { return 0; }
  int size() const override { return 1; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  const char* backend() const override { return "single"; }
  nn::Device device() const override { return device_; }

  void all_reduce(nn::Tensor& t, ReduceOp) override { check_reducible(t, "all_reduce"); }
  void all_reduce(std::span<double>, ReduceOp) override {}
  void all_reduce(std::span<int64_t>, ReduceOp) override {}
  void broadcast(nn::Tensor&, int root) override;
  void reduce_scatter(const nn::Tensor& in, nn::Tensor& out, ReduceOp op) override;
  void all_gather_in_place(nn::Tensor&) override {}
  void barrier() override {}
  [[noreturn]] void abort(const std::string& message, int code) override;

 private:
  nn::Device device_;
};

}  // namespace kglm::dist
