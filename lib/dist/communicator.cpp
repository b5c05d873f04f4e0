// make_communicator: which implementation this process gets (communicator.hpp).
#include "dist/communicator.hpp"

#include <cstdlib>
#include <string>

#include "core/error.hpp"
#include "dist/single_communicator.hpp"
#include "nn/cuda/runtime.hpp"
#if KGLM_WITH_MPI
#include "dist/mpi_communicator.hpp"
#endif
#if KGLM_WITH_NCCL
#include "dist/nccl_communicator.hpp"
#endif

namespace kglm::dist {

namespace {

// The world size an MPI launcher announces, or 0 when none started this process: OpenMPI's
// mpirun sets OMPI_COMM_WORLD_SIZE, MPICH's and Slurm's PMI PMI_SIZE, PMIx launchers (srun
// --mpi=pmix, OpenMPI 5) PMIX_RANK with Slurm's SLURM_NTASKS beside it.
long announced_world_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* v = std::getenv(name)) return std::atol(v);
  if (std::getenv("PMIX_RANK")) {
    const char* tasks = std::getenv("SLURM_NTASKS");
    return tasks ? std::atol(tasks) : 1;
  }
  return 0;
}

}  // namespace

void check_reducible(const nn::Tensor& t, const char* op) {
  const nn::DType d = t.dtype();
  if (d != nn::DType::F32 && d != nn::DType::F64 && d != nn::DType::I32 && d != nn::DType::I64)
    throw Error(std::string(op) + ": cannot reduce " + std::string(nn::dtype_name(d)) + " tensors");
}

bool launched_by_mpi() { return announced_world_size() > 0; }

double timeout_seconds() {
  const char* v = std::getenv("KGLM_DIST_TIMEOUT");
  if (!v || !*v) return 600;
  char* end = nullptr;
  const double seconds = std::strtod(v, &end);
  if (*end != '\0' || !(seconds > 0))
    throw Error("KGLM_DIST_TIMEOUT=" + std::string(v) + " is not a number of seconds > 0");
  return seconds;
}

std::unique_ptr<Communicator> make_communicator(nn::Device device) {
  const long announced = announced_world_size();
  if (announced == 0) return std::make_unique<SingleCommunicator>(device);
  nn::require_device(device);
#if KGLM_WITH_MPI
  auto mpi = std::make_unique<MpiCommunicator>();
  if (device != nn::Device::Cuda) return mpi;
  // One GPU per rank, by the rank's place among the ranks on its host.
  const int gpus = nn::cuda::device_count();
  if (mpi->local_rank() >= gpus)
    throw Error("rank " + std::to_string(mpi->rank()) + " is rank " + std::to_string(mpi->local_rank()) +
                " on its host, which has " + std::to_string(gpus) + " GPUs: start at most one rank per GPU");
  nn::cuda::select_device(mpi->local_rank());
#if KGLM_WITH_NCCL
  return std::make_unique<NcclCommunicator>(std::move(mpi));
#else
  if (mpi->size() > 1)
    throw Error("--device cuda across " + std::to_string(mpi->size()) + " ranks needs a build with NCCL");
  return std::make_unique<SingleCommunicator>(device);
#endif
#else
  if (announced > 1)
    throw Error("started by an MPI launcher as one of " + std::to_string(announced) +
                " ranks, but this build has no MPI (install libopenmpi-dev and configure with KGLM_MPI=AUTO or ON)");
  return std::make_unique<SingleCommunicator>(device);
#endif
}

int run_on_every_rank(Communicator& comm, const char* tool, const std::function<int()>& body) {
  if (comm.size() == 1) return body();
  int status = 0;
  try {
    status = body();
  } catch (const UsageError& e) {
    comm.abort(std::string(tool) + ": rank " + std::to_string(comm.rank()) + ": " + e.what(), 2);
  } catch (const std::exception& e) {
    comm.abort(std::string(tool) + ": error: rank " + std::to_string(comm.rank()) + ": " + e.what(), 1);
  }
  comm.barrier();
  return status;
}

}  // namespace kglm::dist
