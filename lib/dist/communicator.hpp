// Collective communication between the ranks of a data-parallel run, behind one interface with
// three implementations: a single process (every operation is the identity), MPI (host buffers)
// and NCCL (GPU buffers; host scalars and the bootstrap go over MPI). The trainer is written once
// against this interface and does not know which one it has.
//
// Every rank must call the collectives in the same order with the same sizes; tensors are 1-D and
// contiguous. A collective that has not completed after timeout_seconds() (KGLM_DIST_TIMEOUT,
// default 600 s) aborts the whole job with a message naming the operation, so a rank that died or
// hangs makes the others exit with an error instead of waiting forever (NCCL: a watchdog thread
// holds every queued operation to the same limit).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

#include "nn/tensor.hpp"

namespace kglm::dist {

enum class ReduceOp : uint8_t { Sum, Average };

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // The rank's index among the ranks on its host, and how many share the host (GPU choice).
  virtual int local_rank() const = 0;
  virtual int local_size() const = 0;
  // "single", "mpi" or "nccl".
  virtual const char* backend() const = 0;
  // The device whose tensors the tensor collectives take: Cpu for single and MPI, Cuda for NCCL.
  virtual nn::Device device() const = 0;

  // In place over every rank's `t` (F32, F64, I32 or I64).
  virtual void all_reduce(nn::Tensor& t, ReduceOp op) = 0;
  // Small host arrays (losses, counts, flags): always on the host, whatever the device.
  virtual void all_reduce(std::span<double> values, ReduceOp op) = 0;
  virtual void all_reduce(std::span<int64_t> values, ReduceOp op) = 0;
  // `t` of rank `root` into every rank's `t` (any dtype).
  virtual void broadcast(nn::Tensor& t, int root) = 0;
  // in: [size() · n] on every rank; out: [n], rank r's block of the reduction over ranks.
  virtual void reduce_scatter(const nn::Tensor& in, nn::Tensor& out, ReduceOp op) = 0;
  // `t`: [size() · n]; block r of rank r goes to block r of every rank, in place (any dtype).
  virtual void all_gather_in_place(nn::Tensor& t) = 0;
  virtual void barrier() = 0;

  // Overlap: start_all_reduce queues a sum or average of `t` that may still be running when it
  // returns (t must not be touched until wait_all()); wait_all() completes every queued one. On
  // the GPU the wait is a dependency of the compute stream, not a host synchronisation.
  virtual void start_all_reduce(nn::Tensor& t, ReduceOp op) { all_reduce(t, op); }
  virtual void wait_all() {}

  // Ends the whole job at once (every rank), after `message` on stderr: for an error on one rank
  // while the others may be inside a collective. With one rank: prints and exits with `code`.
  [[noreturn]] virtual void abort(const std::string& message, int code) = 0;
};

// The communicator of this process: MPI when the process was started by an MPI launcher (mpirun,
// srun with PMIx) in a build with MPI, then NCCL on top of it when `device` is Cuda and the build
// has NCCL; otherwise the single process. A rank with device Cuda selects its GPU here, by its
// index among the ranks on its host. Throws when a multi-rank launch cannot be honoured (a build
// without MPI started by mpirun, a GPU run across ranks without NCCL).
std::unique_ptr<Communicator> make_communicator(nn::Device device);

// Whether the environment says an MPI launcher started this process (with more than one rank).
bool launched_by_mpi();

// Runs a tool's body on this rank and returns its status. With several ranks, an exception ends
// the whole job through abort() (exit 2 for a UsageError, 1 otherwise), since the other ranks
// would wait for this one forever; then every rank meets at a barrier (rank 0 may still be
// writing). One rank: the exception propagates to run_tool.
int run_on_every_rank(Communicator& comm, const char* tool, const std::function<int()>& body);

// For the implementations: throws unless `t` can be reduced on the host (F32, F64, I32, I64).
void check_reducible(const nn::Tensor& t, const char* op);

// KGLM_DIST_TIMEOUT in seconds (default 600); throws on a value that is not a positive number.
double timeout_seconds();

}  // namespace kglm::dist
