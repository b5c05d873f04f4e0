// The MPI communicator (host buffers): MPI_COMM_WORLD of a job started by mpirun or srun. Each
// collective is a non-blocking MPI call completed by a polling wait with a deadline (see
// timeout_seconds()), so that a rank that died or hangs aborts the job instead of hanging it.
// MPI is initialised by the first MpiCommunicator and finalised at exit.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "dist/communicator.hpp"

namespace kglm::dist {

class MpiCommunicator final : public Communicator {
 public:
  MpiCommunicator();
  ~MpiCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  int local_size() const override { return local_size_; }
  const char* backend() const override { return "mpi"; }
  nn::Device device() const override { return nn::Device::Cpu; }

  void all_reduce(nn::Tensor& t, ReduceOp op) override;
  void all_reduce(std::span<double> values, ReduceOp op) override;
  void all_reduce(std::span<int64_t> values, ReduceOp op) override;
  void broadcast(nn::Tensor& t, int root) override;
  void reduce_scatter(const nn::Tensor& in, nn::Tensor& out, ReduceOp op) override;
  void all_gather_in_place(nn::Tensor& t) override;
  void barrier() override;
  void start_all_reduce(nn::Tensor& t, ReduceOp op) override;
  void wait_all() override;
  [[noreturn]] void abort(const std::string& message, int code) override;

  // For the NCCL communicator, which bootstraps and reduces host scalars over MPI.
  void broadcast_bytes(void* data, size_t bytes, int root);

 private:
  struct Pending {
    MPI_Request request;
    nn::Tensor tensor;  // to divide by size() once complete (Average), else undefined
  };
  // Completes `request`, polling until timeout_seconds() have passed, then aborts the job.
  void wait(MPI_Request& request, const char* op);
  void host_only(const nn::Tensor& t, const char* op) const;
  // A host array in place (the scalars' all-reduce, without a tensor's copy).
  template <class T>
  void reduce_values(std::span<T> values, MPI_Datatype type, ReduceOp op);

  int rank_ = 0, size_ = 1, local_rank_ = 0, local_size_ = 1;
  double timeout_ = 600;
  std::vector<Pending> pending_;
};

}  // namespace kglm::dist
