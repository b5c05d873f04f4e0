// How long the communicator's all-reduce takes on this job's ranks and network, size by size (as
// nccl-tests' all_reduce_perf reports it): `pretrain comm-bench` runs it under mpirun or srun so
// that a cluster's numbers can go into the scaling model of pretrain(1).
#pragma once

#include <cstdint>
#include <vector>

#include "dist/communicator.hpp"

namespace kglm::dist {

struct AllReduceTiming {
  uint64_t bytes = 0;  // F32 elements × 4
  double seconds = 0;  // per all-reduce: the ranks' mean over the iterations
  // Algorithm bandwidth bytes / seconds, and bus bandwidth: that times 2(n − 1)/n, what a ring
  // moves through each rank's link, comparable across world sizes and with the link's speed.
  double algorithm_gbps() const { return static_cast<double>(bytes) / seconds / 1e9; }
  double bus_gbps(int ranks) const { return algorithm_gbps() * 2.0 * (ranks - 1) / ranks; }
};

// Sums of F32 buffers of min_bytes, 4·min_bytes, … up to max_bytes on comm.device(), each timed
// over `iterations` after 2 untimed ones; every rank returns the same timings.
std::vector<AllReduceTiming> time_all_reduce(Communicator& comm, uint64_t min_bytes, uint64_t max_bytes,
                                             int iterations);

// seconds = latency + bytes / bandwidth: the smallest size's time as the latency (it is nearly all
// latency), and the bandwidth of the largest size once that latency is taken off (a least-squares
// line through sizes four orders of magnitude apart is all large sizes and can go negative).
struct AllReduceModel {
  double latency_s = 0;
  double bytes_per_s = 0;
};
AllReduceModel fit_all_reduce(const std::vector<AllReduceTiming>& timings);

}  // namespace kglm::dist
