#include "dist/nccl_communicator.hpp"

#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

#include "core/error.hpp"
#include "nn/cuda/context.hpp"
#include "nn/cuda/runtime.hpp"

namespace kglm::dist {

namespace {

void check(ncclResult_t status, const char* op) {
  if (status != ncclSuccess)
    throw Error(std::string("nccl: ") + op + ": " + ncclGetErrorString(status) + " (" + ncclGetLastError(nullptr) +
                ")");
}

ncclDataType_t nccl_type(nn::DType dtype) {
  switch (dtype) {
    case nn::DType::F32:
      return ncclFloat32;
    case nn::DType::F64:
      return ncclFloat64;
    case nn::DType::I32:
      return ncclInt32;
    case nn::DType::I64:
      return ncclInt64;
    case nn::DType::U8:
      return ncclUint8;
    case nn::DType::F16:
      return ncclFloat16;
    case nn::DType::BF16:
      return ncclBfloat16;
  }
  throw Error("nccl: unknown dtype");
}

ncclRedOp_t nccl_op(ReduceOp op) { return op == ReduceOp::Average ? ncclAvg : ncclSum; }

void on_gpu(const nn::Tensor& t, const char* op) {
  if (t.device() != nn::Device::Cuda)
    throw Error(std::string("nccl: ") + op + ": NCCL takes GPU tensors; host tensors go through MPI");
}

// A peer that hangs leaves this rank's NCCL kernels spinning and the rank blocked in its next CUDA
// wait, where the MPI collectives' timeout cannot see it. The watchdog thread checks that every
// NCCL operation completes within timeout_seconds() of being queued (an event recorded after it),
// and otherwise aborts the communicator and ends the process, which makes the launcher end the job.
// It exits rather than call MPI_Abort: MPI is initialised for the main thread only.
class Watchdog {
 public:
  Watchdog(double timeout, int rank, ncclComm_t comm) : timeout_(timeout), rank_(rank), comm_(comm) {
    thread_ = std::thread([this] { run(); });
  }
  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
    for (const Pending& p : pending_) cudaEventDestroy(p.event);
  }
  // After an operation was queued on `stream`.
  void watch(cudaStream_t stream, const char* op) {
    cudaEvent_t event = nullptr;
    nn::cuda::check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "nccl", "cudaEventCreate");
    nn::cuda::check(cudaEventRecord(event, stream), "nccl", "cudaEventRecord");
    std::lock_guard lock(mutex_);
    pending_.push_back({event, Clock::now(), op});
  }

 private:
  using Clock = std::chrono::steady_clock;
  struct Pending {
    cudaEvent_t event;
    Clock::time_point queued;
    const char* op;
  };

  void run() {
    std::unique_lock lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stop_; })) {
      while (!pending_.empty()) {
        const cudaError_t status = cudaEventQuery(pending_.front().event);
        if (status == cudaErrorNotReady) break;
        if (status != cudaSuccess) fail(std::string("failed on the GPU: ") + cudaGetErrorString(status));
        cudaEventDestroy(pending_.front().event);
        pending_.pop_front();
      }
      if (!pending_.empty() &&
          std::chrono::duration<double>(Clock::now() - pending_.front().queued).count() > timeout_) {
        char seconds[32];
        std::snprintf(seconds, sizeof seconds, "%.0f", timeout_);
        fail(std::string("has not completed in ") + seconds +
             " s (a rank died or hangs; KGLM_DIST_TIMEOUT sets the limit)");
      }
    }
  }

  [[noreturn]] void fail(const std::string& what) {
    std::fprintf(stderr, "kglm: error: rank %d: nccl %s %s\n", rank_, pending_.front().op, what.c_str());
    std::fflush(stderr);
    ncclCommAbort(comm_);
    std::_Exit(1);
  }

  double timeout_;
  int rank_;
  ncclComm_t comm_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Pending> pending_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

struct NcclCommunicator::State {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;  // the communication stream of start_all_reduce
  cudaEvent_t compute_ready = nullptr, comm_done = nullptr;
  bool pending = false;
  std::unique_ptr<Watchdog> watchdog;
};

NcclCommunicator::NcclCommunicator(std::unique_ptr<MpiCommunicator> mpi)
    : mpi_(std::move(mpi)), state_(std::make_unique<State>()) {
  ncclUniqueId id;
  if (mpi_->rank() == 0) check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  mpi_->broadcast_bytes(&id, sizeof id, 0);
  nn::cuda::Context::get();  // the context (and device) first: NCCL binds to the current device
  check(ncclCommInitRank(&state_->comm, mpi_->size(), id, mpi_->rank()), "ncclCommInitRank");
  nn::cuda::check(cudaStreamCreateWithFlags(&state_->stream, cudaStreamNonBlocking), "nccl", "cudaStreamCreate");
  nn::cuda::check(cudaEventCreateWithFlags(&state_->compute_ready, cudaEventDisableTiming), "nccl", "cudaEventCreate");
  nn::cuda::check(cudaEventCreateWithFlags(&state_->comm_done, cudaEventDisableTiming), "nccl", "cudaEventCreate");
  state_->watchdog = std::make_unique<Watchdog>(timeout_seconds(), mpi_->rank(), state_->comm);
}

NcclCommunicator::~NcclCommunicator() {
  state_->watchdog.reset();  // before the communicator it watches
  if (state_->comm) ncclCommDestroy(state_->comm);
  if (state_->compute_ready) cudaEventDestroy(state_->compute_ready);
  if (state_->comm_done) cudaEventDestroy(state_->comm_done);
  if (state_->stream) cudaStreamDestroy(state_->stream);
}

void NcclCommunicator::all_reduce(nn::Tensor& t, ReduceOp op) {
  on_gpu(t, "all_reduce");
  check(ncclAllReduce(t.raw(), t.raw(), static_cast<size_t>(t.numel()), nccl_type(t.dtype()), nccl_op(op), state_->comm,
                      nn::cuda::Context::get().stream()),
        "all_reduce");
  state_->watchdog->watch(nn::cuda::Context::get().stream(), "all_reduce");
}

void NcclCommunicator::broadcast(nn::Tensor& t, int root) {
  on_gpu(t, "broadcast");
  check(ncclBroadcast(t.raw(), t.raw(), static_cast<size_t>(t.numel()), nccl_type(t.dtype()), root, state_->comm,
                      nn::cuda::Context::get().stream()),
        "broadcast");
  state_->watchdog->watch(nn::cuda::Context::get().stream(), "broadcast");
}

void NcclCommunicator::reduce_scatter(const nn::Tensor& in, nn::Tensor& out, ReduceOp op) {
  on_gpu(in, "reduce_scatter");
  on_gpu(out, "reduce_scatter");
  if (in.dtype() != out.dtype() || in.numel() != out.numel() * size())
    throw Error("nccl: reduce_scatter: " + std::to_string(in.numel()) + " elements do not make " +
                std::to_string(size()) + " blocks of " + std::to_string(out.numel()));
  check(ncclReduceScatter(in.raw(), out.raw(), static_cast<size_t>(out.numel()), nccl_type(in.dtype()), nccl_op(op),
                          state_->comm, nn::cuda::Context::get().stream()),
        "reduce_scatter");
  state_->watchdog->watch(nn::cuda::Context::get().stream(), "reduce_scatter");
}

void NcclCommunicator::all_gather_in_place(nn::Tensor& t) {
  on_gpu(t, "all_gather");
  if (t.numel() % size() != 0)
    throw Error("nccl: all_gather: " + std::to_string(t.numel()) + " elements are not " + std::to_string(size()) +
                " equal blocks");
  const size_t block = static_cast<size_t>(t.numel() / size());
  // In place as NCCL defines it: the send buffer is the rank's own block of the receive buffer.
  auto* base = static_cast<std::byte*>(t.raw());
  check(ncclAllGather(base + block * nn::dtype_size(t.dtype()) * static_cast<size_t>(rank()), base, block,
                      nccl_type(t.dtype()), state_->comm, nn::cuda::Context::get().stream()),
        "all_gather");
  state_->watchdog->watch(nn::cuda::Context::get().stream(), "all_gather");
}

void NcclCommunicator::barrier() {
  nn::cuda::synchronize();
  mpi_->barrier();
}

void NcclCommunicator::start_all_reduce(nn::Tensor& t, ReduceOp op) {
  on_gpu(t, "all_reduce");
  cudaStream_t compute = nn::cuda::Context::get().stream();
  // The communication stream starts after everything queued so far (the bucket's gradients).
  nn::cuda::check(cudaEventRecord(state_->compute_ready, compute), "nccl", "cudaEventRecord");
  nn::cuda::check(cudaStreamWaitEvent(state_->stream, state_->compute_ready, 0), "nccl", "cudaStreamWaitEvent");
  check(ncclAllReduce(t.raw(), t.raw(), static_cast<size_t>(t.numel()), nccl_type(t.dtype()), nccl_op(op), state_->comm,
                      state_->stream),
        "all_reduce");
  state_->watchdog->watch(state_->stream, "all_reduce");
  state_->pending = true;
}

void NcclCommunicator::wait_all() {
  if (!state_->pending) return;
  cudaStream_t compute = nn::cuda::Context::get().stream();
  nn::cuda::check(cudaEventRecord(state_->comm_done, state_->stream), "nccl", "cudaEventRecord");
  nn::cuda::check(cudaStreamWaitEvent(compute, state_->comm_done, 0), "nccl", "cudaStreamWaitEvent");
  state_->pending = false;
}

void NcclCommunicator::abort(const std::string& message, int code) {
  if (state_->comm) ncclCommAbort(state_->comm);
  state_->comm = nullptr;
  mpi_->abort(message, code);
}

}  // namespace kglm::dist
