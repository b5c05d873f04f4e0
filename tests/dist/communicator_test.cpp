// The communicators' collectives, checked as functions of rank and size: run alone (the single
// process) by ctest's discovery, and under `mpirun -np 2` (MPI) by the dist_mpi test.
#include "dist/communicator.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <numeric>
#include <vector>

#include "core/error.hpp"
#include "dist/gradient_buckets.hpp"

namespace kglm::dist {
namespace {

using nn::DType;
using nn::Tensor;

Communicator& world() {
  static const std::unique_ptr<Communicator> comm = make_communicator(nn::Device::Cpu);
  return *comm;
}

TEST(Communicator, RanksAndHosts) {
  Communicator& c = world();
  EXPECT_GE(c.size(), 1);
  EXPECT_GE(c.rank(), 0);
  EXPECT_LT(c.rank(), c.size());
  EXPECT_LT(c.local_rank(), c.local_size());
  EXPECT_LE(c.local_size(), c.size());
  EXPECT_EQ(std::string(c.backend()), c.size() > 1 || launched_by_mpi() ? "mpi" : "single");
  EXPECT_EQ(c.device(), nn::Device::Cpu);
}

TEST(Communicator, AllReduceSumsAndAveragesTensors) {
  Communicator& c = world();
  const int n = c.size(), r = c.rank();
  Tensor f = Tensor::from<float>({3}, {1.0f * r, 2.0f, -0.5f * r});
  c.all_reduce(f, ReduceOp::Sum);
  const float ranks_sum = static_cast<float>(n * (n - 1) / 2);
  EXPECT_FLOAT_EQ(f.data<float>()[0], ranks_sum);
  EXPECT_FLOAT_EQ(f.data<float>()[1], 2.0f * n);
  EXPECT_FLOAT_EQ(f.data<float>()[2], -0.5f * ranks_sum);
  Tensor d = Tensor::from<double>({2}, {1.0 + r, 4.0});
  c.all_reduce(d, ReduceOp::Average);
  EXPECT_DOUBLE_EQ(d.data<double>()[0], 1.0 + (n - 1) / 2.0);
  EXPECT_DOUBLE_EQ(d.data<double>()[1], 4.0);
  Tensor i = Tensor::from<int64_t>({1}, {int64_t{1} << 40});
  c.all_reduce(i, ReduceOp::Sum);
  EXPECT_EQ(i.data<int64_t>()[0], (int64_t{1} << 40) * n);
  Tensor half = Tensor::zeros({2}, DType::BF16);
  EXPECT_THROW(c.all_reduce(half, ReduceOp::Sum), Error);  // moved, never reduced (MPI has no bf16)
}

TEST(Communicator, AllReducesHostScalars) {
  Communicator& c = world();
  std::vector<double> losses{0.25 * c.rank(), 1.0};
  c.all_reduce(losses, ReduceOp::Sum);
  EXPECT_DOUBLE_EQ(losses[1], c.size());
  std::vector<int64_t> counts{c.rank() + 1, 7};
  c.all_reduce(counts, ReduceOp::Sum);
  EXPECT_EQ(counts[0], c.size() * (c.size() + 1) / 2);
  EXPECT_EQ(counts[1], 7 * c.size());
}

TEST(Communicator, BroadcastsFromTheLastRank) {
  Communicator& c = world();
  const int root = c.size() - 1;
  Tensor t = Tensor::from<int32_t>({2}, {c.rank() == root ? 42 : -1, c.rank()});
  c.broadcast(t, root);
  EXPECT_EQ(t.data<int32_t>()[0], 42);
  EXPECT_EQ(t.data<int32_t>()[1], root);
}

TEST(Communicator, ReduceScatterGivesEachRankItsBlockOfTheSum) {
  Communicator& c = world();
  const int n = c.size(), r = c.rank();
  constexpr int64_t kBlock = 5;
  std::vector<float> in(static_cast<size_t>(kBlock * n));
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(100 * r + static_cast<int>(i));
  Tensor input = Tensor::from<float>({kBlock * n}, in), out = Tensor::empty({kBlock});
  c.reduce_scatter(input, out, ReduceOp::Sum);
  for (int64_t j = 0; j < kBlock; ++j) {
    float expected = 0;
    for (int k = 0; k < n; ++k) expected += static_cast<float>(100 * k + r * kBlock + j);
    EXPECT_FLOAT_EQ(out.data<float>()[j], expected) << j;
  }
  Tensor wrong = Tensor::empty({kBlock + 1});
  EXPECT_THROW(c.reduce_scatter(input, wrong, ReduceOp::Sum), Error);
}

TEST(Communicator, AllGatherInPlaceCollectsEveryRanksBlock) {
  Communicator& c = world();
  const int n = c.size();
  constexpr int64_t kBlock = 3;
  Tensor t = Tensor::empty({kBlock * n});
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = i / kBlock == c.rank() ? 10.0f * c.rank() + i : -1.0f;
  c.all_gather_in_place(t);
  for (int64_t i = 0; i < t.numel(); ++i) EXPECT_FLOAT_EQ(t.data<float>()[i], 10.0f * (i / kBlock) + i) << i;
}

TEST(Communicator, StartedReductionsCompleteAtWaitAll) {
  Communicator& c = world();
  std::vector<Tensor> parts;
  for (int k = 0; k < 4; ++k) {
    parts.push_back(Tensor::from<float>({2}, {1.0f * k, 1.0f}));
    c.start_all_reduce(parts.back(), k % 2 ? ReduceOp::Average : ReduceOp::Sum);
  }
  c.wait_all();
  for (int k = 0; k < 4; ++k) {
    EXPECT_FLOAT_EQ(parts[k].data<float>()[0], k % 2 ? 1.0f * k : 1.0f * k * c.size()) << k;
    EXPECT_FLOAT_EQ(parts[k].data<float>()[1], k % 2 ? 1.0f : 1.0f * c.size()) << k;
  }
  c.barrier();
}

TEST(GradientBuckets, ReduceFromTheTopDownAsTheBackwardPassFinishesThem) {
  Communicator& c = world();
  Tensor grads = Tensor::empty({10});
  for (int64_t i = 0; i < 10; ++i) grads.data<float>()[i] = static_cast<float>(i + c.rank());
  GradientBuckets buckets(c, grads, 3);
  EXPECT_EQ(buckets.buckets(), 4u);  // [7, 10), [4, 7), [1, 4), [0, 1)
  buckets.ready_from(5);             // only [7, 10) is final
  buckets.ready_from(4);             // and now [4, 7)
  buckets.finish();                  // the rest, then the wait
  const int n = c.size();
  for (int64_t i = 0; i < 10; ++i)
    EXPECT_FLOAT_EQ(grads.data<float>()[i], static_cast<float>(n * i + n * (n - 1) / 2)) << i;
  EXPECT_THROW(GradientBuckets(c, grads, 0), Error);
}

TEST(Communicator, TimeoutComesFromTheEnvironment) {
  const char* saved = std::getenv("KGLM_DIST_TIMEOUT");
  const std::string before = saved ? saved : "";
  unsetenv("KGLM_DIST_TIMEOUT");
  EXPECT_EQ(timeout_seconds(), 600);
  setenv("KGLM_DIST_TIMEOUT", "2.5", 1);
  EXPECT_EQ(timeout_seconds(), 2.5);
  for (const char* bad : {"0", "-3", "ten", "5s"}) {
    setenv("KGLM_DIST_TIMEOUT", bad, 1);
    EXPECT_THROW(timeout_seconds(), Error) << bad;
  }
  if (saved)
    setenv("KGLM_DIST_TIMEOUT", before.c_str(), 1);
  else
    unsetenv("KGLM_DIST_TIMEOUT");
}

}  // namespace
}  // namespace kglm::dist
