// The NCCL communicator on GPU tensors: under `mpirun -np 1` (world size 1, the dist_nccl test) or
// more ranks where the host has a GPU for each; skipped without a GPU or without a launcher.
#include <gtest/gtest.h>

#include <vector>

#include "dist/communicator.hpp"
#include "dist/gradient_buckets.hpp"
#include "nn/cuda/runtime.hpp"

namespace kglm::dist {
namespace {

using nn::Device;
using nn::Tensor;

class Nccl : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!nn::cuda::available()) GTEST_SKIP() << nn::cuda::unavailable_reason();
    if (!launched_by_mpi()) GTEST_SKIP() << "not started by mpirun";
    static const std::unique_ptr<Communicator> comm = make_communicator(Device::Cuda);
    comm_ = comm.get();
    if (std::string(comm_->backend()) != "nccl") GTEST_SKIP() << "this build has no NCCL";
  }
  static Tensor on_gpu(const std::vector<float>& v) {
    return Tensor::from<float>({static_cast<int64_t>(v.size())}, v).to(Device::Cuda);
  }
  static std::vector<float> on_host(const Tensor& t) {
    const Tensor h = t.to(Device::Cpu);
    return std::vector<float>(h.data<float>(), h.data<float>() + h.numel());
  }
  Communicator* comm_ = nullptr;
};

TEST_F(Nccl, CollectivesOnGpuTensors) {
  const int n = comm_->size(), r = comm_->rank();
  EXPECT_EQ(comm_->device(), Device::Cuda);
  Tensor t = on_gpu({1.0f * r, 2.0f});
  comm_->all_reduce(t, ReduceOp::Sum);
  EXPECT_EQ(on_host(t), (std::vector<float>{n * (n - 1) / 2.0f, 2.0f * n}));
  comm_->all_reduce(t, ReduceOp::Average);
  EXPECT_FLOAT_EQ(on_host(t)[1], 2.0f * n);
  Tensor b = on_gpu({r == 0 ? 7.0f : -1.0f});
  comm_->broadcast(b, 0);
  EXPECT_EQ(on_host(b)[0], 7.0f);
  std::vector<float> in(static_cast<size_t>(2 * n));
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i + r);
  Tensor out = Tensor::empty({2}, nn::DType::F32, Device::Cuda);
  comm_->reduce_scatter(on_gpu(in), out, ReduceOp::Sum);
  EXPECT_EQ(on_host(out), (std::vector<float>{static_cast<float>(n * 2 * r + n * (n - 1) / 2),
                                              static_cast<float>(n * (2 * r + 1) + n * (n - 1) / 2)}));
  std::vector<float> blocks(static_cast<size_t>(2 * n), -1.0f);
  blocks[2 * r] = blocks[2 * r + 1] = static_cast<float>(r);
  Tensor gathered = on_gpu(blocks);
  comm_->all_gather_in_place(gathered);
  for (int k = 0; k < 2 * n; ++k) EXPECT_EQ(on_host(gathered)[k], static_cast<float>(k / 2)) << k;
  std::vector<double> host{1.0};
  comm_->all_reduce(host, ReduceOp::Sum);  // host scalars go over MPI
  EXPECT_EQ(host[0], n);
  comm_->barrier();
}

TEST_F(Nccl, BucketsOverlapOnTheCommunicationStream) {
  const int n = comm_->size();
  std::vector<float> g(1000);
  for (size_t i = 0; i < g.size(); ++i) g[i] = static_cast<float>(i);
  Tensor grads = on_gpu(g);
  GradientBuckets buckets(*comm_, grads, 96);
  buckets.ready_from(500);
  buckets.finish();  // the compute stream waits for the reductions; the copy to the host after them
  const std::vector<float> summed = on_host(grads);
  for (size_t i = 0; i < g.size(); ++i) ASSERT_EQ(summed[i], static_cast<float>(n) * g[i]) << i;
}

}  // namespace
}  // namespace kglm::dist
