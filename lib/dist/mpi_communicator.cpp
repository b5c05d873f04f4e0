#include "dist/mpi_communicator.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "core/error.hpp"

namespace kglm::dist {

namespace {

using Clock = std::chrono::steady_clock;

MPI_Datatype mpi_type(nn::DType dtype, const char* op) {
  switch (dtype) {
    case nn::DType::F32:
      return MPI_FLOAT;
    case nn::DType::F64:
      return MPI_DOUBLE;
    case nn::DType::I32:
      return MPI_INT32_T;
    case nn::DType::I64:
      return MPI_INT64_T;
    case nn::DType::U8:
      return MPI_UINT8_T;
    case nn::DType::BF16:
    case nn::DType::F16:
      return MPI_UINT16_T;  // moved, never reduced (reductions reject them first)
  }
  throw Error(std::string(op) + ": unknown dtype");
}

int count_of(int64_t n, const char* op) {
  if (n > INT32_MAX) throw Error(std::string(op) + ": " + std::to_string(n) + " elements in one MPI call");
  return static_cast<int>(n);
}

template <class T>
void divide(T* p, size_t n, int size) {
  for (size_t i = 0; i < n; ++i) p[i] /= static_cast<T>(size);
}

void divide(nn::Tensor& t, int size) {
  switch (t.dtype()) {
    case nn::DType::F32:
      return divide(t.data<float>(), static_cast<size_t>(t.numel()), size);
    case nn::DType::F64:
      return divide(t.data<double>(), static_cast<size_t>(t.numel()), size);
    case nn::DType::I32:
      return divide(t.data<int32_t>(), static_cast<size_t>(t.numel()), size);
    case nn::DType::I64:
      return divide(t.data<int64_t>(), static_cast<size_t>(t.numel()), size);
    default:
      throw Error("all_reduce: cannot average this dtype");
  }
}

// MPI_Init once per process, MPI_Finalize at exit (after every communicator is gone).
void ensure_initialized() {
  int done = 0;
  MPI_Initialized(&done);
  if (done) return;
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    throw Error("MPI_Init_thread failed");
  std::atexit([] {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
  });
}

}  // namespace

MpiCommunicator::MpiCommunicator() : timeout_(timeout_seconds()) {
  ensure_initialized();
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  // The ranks on this host, by hostname: the local rank picks the GPU (launchers do not agree on
  // an environment variable for it, and rank % GPUs is wrong when hosts run different counts).
  constexpr size_t kName = 256;
  std::vector<char> names(kName * static_cast<size_t>(size_), '\0');
  char* mine = names.data() + kName * static_cast<size_t>(rank_);
  if (gethostname(mine, kName - 1) != 0) throw Error("gethostname failed");
  MPI_Request request;
  MPI_Iallgather(MPI_IN_PLACE, 0, MPI_CHAR, names.data(), kName, MPI_CHAR, MPI_COMM_WORLD, &request);
  wait(request, "hostname gather");
  local_rank_ = local_size_ = 0;
  for (int r = 0; r < size_; ++r)
    if (std::string_view(names.data() + kName * static_cast<size_t>(r)) == std::string_view(mine)) {
      if (r < rank_) ++local_rank_;
      ++local_size_;
    }
}

MpiCommunicator::~MpiCommunicator() = default;

void MpiCommunicator::wait(MPI_Request& request, const char* op) {
  const Clock::time_point start = Clock::now();
  for (long polls = 0;; ++polls) {
    int done = 0;
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    // Spin first (most collectives finish within microseconds), then poll without burning a core.
    if (polls > 10000) std::this_thread::sleep_for(std::chrono::microseconds(50));
    if (polls % 1024 == 0 && std::chrono::duration<double>(Clock::now() - start).count() > timeout_) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.0f", timeout_);
      abort("kglm: error: rank " + std::to_string(rank_) + " of " + std::to_string(size_) + ": " + op + " has waited " +
                buf + " s for the other ranks (one died or hangs; KGLM_DIST_TIMEOUT sets the limit)",
            1);
    }
  }
}

void MpiCommunicator::host_only(const nn::Tensor& t, const char* op) const {
  if (t.device() != nn::Device::Cpu)
    throw Error(std::string(op) + ": MPI takes host tensors; GPU tensors go through NCCL");
}

void MpiCommunicator::all_reduce(nn::Tensor& t, ReduceOp op) {
  start_all_reduce(t, op);
  wait_all();
}

void MpiCommunicator::start_all_reduce(nn::Tensor& t, ReduceOp op) {
  host_only(t, "all_reduce");
  check_reducible(t, "all_reduce");
  Pending p{};
  MPI_Iallreduce(MPI_IN_PLACE, t.raw(), count_of(t.numel(), "all_reduce"), mpi_type(t.dtype(), "all_reduce"), MPI_SUM,
                 MPI_COMM_WORLD, &p.request);
  if (op == ReduceOp::Average) p.tensor = t;
  pending_.push_back(std::move(p));
}

void MpiCommunicator::wait_all() {
  for (Pending& p : pending_) {
    wait(p.request, "all_reduce");
    if (p.tensor.defined()) divide(p.tensor, size_);
  }
  pending_.clear();
}

template <class T>
void MpiCommunicator::reduce_values(std::span<T> values, MPI_Datatype type, ReduceOp op) {
  MPI_Request request;
  MPI_Iallreduce(MPI_IN_PLACE, values.data(), count_of(static_cast<int64_t>(values.size()), "all_reduce"), type,
                 MPI_SUM, MPI_COMM_WORLD, &request);
  wait(request, "all_reduce");
  if (op == ReduceOp::Average) divide(values.data(), values.size(), size_);
}

void MpiCommunicator::all_reduce(std::span<double> values, ReduceOp op) { reduce_values(values, MPI_DOUBLE, op); }

void MpiCommunicator::all_reduce(std::span<int64_t> values, ReduceOp op) { reduce_values(values, MPI_INT64_T, op); }

void MpiCommunicator::broadcast(nn::Tensor& t, int root) {
  host_only(t, "broadcast");
  MPI_Request request;
  MPI_Ibcast(t.raw(), count_of(t.numel(), "broadcast"), mpi_type(t.dtype(), "broadcast"), root, MPI_COMM_WORLD,
             &request);
  wait(request, "broadcast");
}

void MpiCommunicator::broadcast_bytes(void* data, size_t bytes, int root) {
  MPI_Request request;
  MPI_Ibcast(data, count_of(static_cast<int64_t>(bytes), "broadcast"), MPI_BYTE, root, MPI_COMM_WORLD, &request);
  wait(request, "broadcast");
}

void MpiCommunicator::reduce_scatter(const nn::Tensor& in, nn::Tensor& out, ReduceOp op) {
  host_only(in, "reduce_scatter");
  host_only(out, "reduce_scatter");
  check_reducible(in, "reduce_scatter");
  if (in.dtype() != out.dtype() || in.numel() != out.numel() * size_)
    throw Error("reduce_scatter: " + std::to_string(in.numel()) + " elements do not make " + std::to_string(size_) +
                " blocks of " + std::to_string(out.numel()));
  MPI_Request request;
  MPI_Ireduce_scatter_block(in.raw(), out.raw(), count_of(out.numel(), "reduce_scatter"),
                            mpi_type(in.dtype(), "reduce_scatter"), MPI_SUM, MPI_COMM_WORLD, &request);
  wait(request, "reduce_scatter");
  if (op == ReduceOp::Average) divide(out, size_);
}

void MpiCommunicator::all_gather_in_place(nn::Tensor& t) {
  host_only(t, "all_gather");
  if (t.numel() % size_ != 0)
    throw Error("all_gather: " + std::to_string(t.numel()) + " elements are not " + std::to_string(size_) +
                " equal blocks");
  MPI_Request request;
  const MPI_Datatype type = mpi_type(t.dtype(), "all_gather");
  const int block = count_of(t.numel() / size_, "all_gather");
  MPI_Iallgather(MPI_IN_PLACE, 0, type, t.raw(), block, type, MPI_COMM_WORLD, &request);
  wait(request, "all_gather");
}

void MpiCommunicator::barrier() {
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  wait(request, "barrier");
}

void MpiCommunicator::abort(const std::string& message, int code) {
  std::fprintf(stderr, "%s\n", message.c_str());
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; this satisfies [[noreturn]]
}

}  // namespace kglm::dist
