// The NCCL communicator (GPU buffers), on top of MPI: rank 0 makes the NCCL unique id and
// broadcasts it over MPI; host scalars, barriers and aborts go over MPI too. Blocking collectives
// are queued on the compute stream (they are ordered with the kernels around them and the host
// does not wait); start_all_reduce queues on a separate communication stream after an event of
// the compute stream, and wait_all makes the compute stream wait for it, so gradient buckets are
// reduced while the backward pass goes on.
#pragma once

#include <memory>

#include "dist/mpi_communicator.hpp"

namespace kglm::dist {

class NcclCommunicator final : public Communicator {
 public:
  // The process's GPU must already be selected (make_communicator does it).
  explicit NcclCommunicator(std::unique_ptr<MpiCommunicator> mpi);
  ~NcclCommunicator() override;

  int rank() const override { return mpi_->rank(); }
  int size() const override { return mpi_->size(); }
  int local_rank() const override { return mpi_->local_rank(); }
  int local_size() const override { return mpi_->local_size(); }
  const char* backend() const override { return "nccl"; }
  nn::Device device() const override { return nn::Device::Cuda; }

  void all_reduce(nn::Tensor& t, ReduceOp op) override;
  void all_reduce(std::span<double> values, ReduceOp op) override { mpi_->all_reduce(values, op); }
  void all_reduce(std::span<int64_t> values, ReduceOp op) override { mpi_->all_reduce(values, op); }
  void broadcast(nn::Tensor& t, int root) override;
  void reduce_scatter(const nn::Tensor& in, nn::Tensor& out, ReduceOp op) override;
  void all_gather_in_place(nn::Tensor& t) override;
  void barrier() override;
  void start_all_reduce(nn::Tensor& t, ReduceOp op) override;
  void wait_all() override;
  [[noreturn]] void abort(const std::string& message, int code) override;

 private:
  struct State;  // the NCCL communicator, the stream and its events (CUDA types stay in the .cpp)
  std::unique_ptr<MpiCommunicator> mpi_;
  std::unique_ptr<State> state_;
};

}  // namespace kglm::dist
