// The Trainer's actions on a dataset made here (a WordPiece vocabulary written by the test, so no
// fixture is needed): step() counts and learns, evaluate() sees the held-out sequences, and save()
// in the middle of a run followed by a resumed Trainer gives the bit-identical end state, on every
// device; a run on the GPU follows the CPU's and repeats itself bit for bit. GPU cases skip
// without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "../unit/test_paths.hpp"
#include "core/error.hpp"
#include "nn/cpu_precision.hpp"
#include "nn/cuda/runtime.hpp"
#include "train/prepare.hpp"
#include "train/trainer.hpp"

namespace kglm::train {
namespace {

using ::kglm::test::ScratchDir;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A vocabulary of specials, a few words and their letters, and 400 lines of sentences over them.
std::string make_dataset(const ScratchDir& dir) {
  const std::vector<std::string> words = {"the", "cat", "dog", "sat", "on", "mat", "ran", "to", "a", "big", "red"};
  std::ofstream vocab(dir.file("vocab.txt"));
  for (const char* s : {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "."}) vocab << s << "\n";
  for (const std::string& w : words) vocab << w << "\n";
  vocab.close();
  std::ofstream text(dir.file("text.txt"));
  for (int i = 0; i < 400; ++i) {
    for (int k = 0; k < 6 + i % 5; ++k) text << (k ? " " : "") << words[(i * 7 + k * 3) % words.size()];
    text << " .\n";
  }
  text.close();
  PrepareOptions p;
  p.inputs = {"en=" + dir.file("text.txt")};
  p.output = dir.file("tokens.h5");
  p.tokenizer = dir.file("vocab.txt");
  p.max_len = 16;
  p.quiet = true;
  run_prepare(p);
  return p.output;
}

PretrainOptions tiny(const std::string& data, const std::string& out) {
  PretrainOptions o;
  o.data = data;
  o.out = out;
  o.layers = 2;
  o.hidden = 16;
  o.heads = 2;
  o.ffn = 32;
  o.batch = 8;
  o.accumulate = 2;
  o.steps = 8;
  o.optimizer.lr = 3e-3;
  o.eval_fraction = 0.1;
  o.seed = 11;
  o.threads = 1;
  o.quiet = true;
  return o;
}

class TrainerOn : public ::testing::TestWithParam<nn::Device> {
 protected:
  void SetUp() override {
    if (GetParam() == nn::Device::Cuda && !nn::cuda::available()) GTEST_SKIP() << nn::cuda::unavailable_reason();
  }
  PretrainOptions tiny(const std::string& data, const std::string& out) const {
    PretrainOptions o = train::tiny(data, out);
    o.device = GetParam();
    return o;
  }
};

INSTANTIATE_TEST_SUITE_P(Devices, TrainerOn, ::testing::Values(nn::Device::Cpu, nn::Device::Cuda),
                         [](const ::testing::TestParamInfo<nn::Device>& info) {
                           return std::string(nn::device_name(info.param));
                         });

TEST_P(TrainerOn, StepsEvaluatesAndResumesBitIdentically) {
  ScratchDir dir;
  const std::string data = make_dataset(dir);

  PretrainOptions whole = tiny(data, dir.file("whole"));
  Trainer a(whole);
  const EvalResult before = a.evaluate();
  EXPECT_GT(before.masked, 0);
  std::vector<double> losses;
  while (!a.done()) {
    const StepResult r = a.step();
    EXPECT_EQ(r.step, a.steps_done());
    EXPECT_GT(r.masked, 0);
    EXPECT_TRUE(std::isfinite(r.loss));
    losses.push_back(r.loss);
  }
  EXPECT_EQ(a.steps_done(), 8);
  EXPECT_LT(a.evaluate().loss, before.loss);  // it learns
  a.save();

  // 4 steps, saved; then a Trainer resumed from that checkpoint runs steps 5..8.
  PretrainOptions first = tiny(data, dir.file("first"));
  first.optimizer.total_steps = 8;  // the same schedule as the whole run
  first.steps = 4;
  {
    Trainer b(first);
    while (!b.done()) b.step();
    b.save();
  }
  PretrainOptions rest = tiny(data, dir.file("rest"));
  rest.resume = dir.file("first");
  Trainer c(rest);
  EXPECT_EQ(c.steps_done(), 4);
  std::vector<double> resumed;
  while (!c.done()) resumed.push_back(c.step().loss);
  c.save();
  ASSERT_EQ(resumed.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(resumed[i], losses[4 + i]) << "step " << 5 + i;
  EXPECT_EQ(slurp(dir.file("whole") + "/model.safetensors"), slurp(dir.file("rest") + "/model.safetensors"));
  EXPECT_EQ(slurp(dir.file("whole") + "/optimizer.safetensors"), slurp(dir.file("rest") + "/optimizer.safetensors"));
  const Stats stats = c.stats();
  EXPECT_EQ(stats.get("steps"), 8);
  EXPECT_EQ(stats.get("steps_run"), 4);
}

struct RunRecord {
  std::vector<double> losses, grad_norms;
  EvalResult eval;
};

RunRecord run_steps(PretrainOptions o, int64_t steps) {
  o.steps = steps;
  Trainer t(o);
  RunRecord r;
  while (!t.done()) {
    const StepResult s = t.step();
    r.losses.push_back(s.loss);
    r.grad_norms.push_back(s.report.grad_norm);
  }
  r.eval = t.evaluate();
  return r;
}

// 50 fp32 steps on the GPU follow the CPU's losses within 1e-4 (same batches, same dropout masks;
// only the order of floating-point sums differs), and a second GPU run repeats the first exactly.
TEST(TrainerOnCuda, FiftyStepsFollowTheCpuAndRerunsAreBitIdentical) {
  if (!nn::cuda::available()) GTEST_SKIP() << nn::cuda::unavailable_reason();
  ScratchDir dir;
  const std::string data = make_dataset(dir);
  PretrainOptions o = tiny(data, dir.file("out"));
  const RunRecord cpu = run_steps(o, 50);
  o.device = nn::Device::Cuda;
  const RunRecord gpu = run_steps(o, 50), again = run_steps(o, 50);
  ASSERT_EQ(gpu.losses.size(), 50u);
  for (size_t i = 0; i < 50; ++i) {
    EXPECT_NEAR(gpu.losses[i], cpu.losses[i], 1e-4 * std::max(1.0, std::abs(cpu.losses[i]))) << "step " << i + 1;
    EXPECT_EQ(again.losses[i], gpu.losses[i]) << "step " << i + 1;
    EXPECT_EQ(again.grad_norms[i], gpu.grad_norms[i]) << "step " << i + 1;
  }
  EXPECT_NEAR(gpu.eval.loss, cpu.eval.loss, 1e-4 * std::max(1.0, cpu.eval.loss));
  EXPECT_EQ(gpu.eval.masked, cpu.eval.masked);
}

// --precision bf16 on the CPU (the products in bfloat16 on AVX512_BF16/AMX CPUs, all else fp32)
// follows the fp32 run's losses within 1e-2 relative over 20 steps, and is not the fp32 run (a
// model large enough for bf16 to gain: 512 rows a batch, hidden 128, FFN 512).
TEST(TrainerOnCpu, Bf16ProductsFollowFp32) {
  if (!nn::cpu_has_bf16()) GTEST_SKIP() << nn::cpu_model_name() << " has neither AVX512_BF16 nor AMX-BF16";
  const nn::ScopedCpuGemmDType restore(nn::DType::F32);
  ScratchDir dir;
  const std::string data = make_dataset(dir);
  PretrainOptions o = tiny(data, dir.file("out"));
  o.hidden = 128;
  o.ffn = 512;
  o.batch = 32;
  o.accumulate = 1;
  const RunRecord fp32 = run_steps(o, 20);
  o.precision = "bf16";
  const RunRecord bf16 = run_steps(o, 20);
  EXPECT_EQ(nn::cpu_gemm_dtype(), nn::DType::BF16);
  size_t differ = 0;
  for (size_t i = 0; i < 20; ++i) {
    EXPECT_NEAR(bf16.losses[i], fp32.losses[i], 1e-2 * fp32.losses[i]) << "step " << i + 1;
    differ += bf16.losses[i] != fp32.losses[i];
  }
  EXPECT_GT(differ, 10u) << "bf16 left the losses as fp32's: its products did not run";
  EXPECT_NEAR(bf16.eval.loss, fp32.eval.loss, 1e-2 * fp32.eval.loss);
  o.precision = "fp32";
  EXPECT_EQ(run_steps(o, 1).losses[0], fp32.losses[0]) << "fp32 after bf16 in one process";
}

// bf16 (Ampere and newer) and fp16 with loss scaling follow the fp32 run's losses within 1e-2 and
// 4e-2 relative over 20 steps; an fp16 run stopped at step 10 and resumed (loss scale included)
// repeats the uninterrupted one bit for bit.
TEST(TrainerOnCuda, MixedPrecisionFollowsFp32AndResumes) {
  if (!nn::cuda::available()) GTEST_SKIP() << nn::cuda::unavailable_reason();
  ScratchDir dir;
  const std::string data = make_dataset(dir);
  PretrainOptions o = tiny(data, dir.file("out"));
  o.device = nn::Device::Cuda;
  const RunRecord fp32 = run_steps(o, 20);
  for (auto [precision, tol] : {std::pair{"bf16", 1e-2}, std::pair{"fp16", 4e-2}}) {
    if (std::string(precision) == "bf16" && nn::cuda::compute_capability() < 80) continue;
    o.precision = precision;
    const RunRecord half = run_steps(o, 20);
    for (size_t i = 0; i < 20; ++i)
      EXPECT_NEAR(half.losses[i], fp32.losses[i], tol * fp32.losses[i]) << precision << " step " << i + 1;
  }
  o.precision = "fp16";
  o.optimizer.total_steps = 20;
  const RunRecord whole = run_steps(o, 20);
  o.steps = 10;
  {
    Trainer first(o);
    while (!first.done()) first.step();
    first.save();
  }
  PretrainOptions rest = tiny(data, dir.file("rest"));
  rest.device = nn::Device::Cuda;
  rest.resume = dir.file("out");
  rest.steps = 20;
  Trainer resumed(rest);
  for (size_t i = 10; i < 20; ++i) EXPECT_EQ(resumed.step().loss, whole.losses[i]) << "step " << i + 1;
}

// Mixed precision is a CUDA feature: on the CPU it is a usage error, as is an unknown precision.
// On the CPU: fp16 is CUDA's (a usage error), bf16 needs the CPU's bf16 instructions (an error
// without them), anything else is a usage error.
TEST(Trainer, PrecisionOnTheCpu) {
  const nn::ScopedCpuGemmDType restore(nn::DType::F32);
  ScratchDir dir;
  PretrainOptions o = tiny(make_dataset(dir), dir.file("out"));
  o.precision = "fp16";
  EXPECT_THROW(Trainer{o}, UsageError);
  o.precision = "fp8";
  EXPECT_THROW(Trainer{o}, UsageError);
  o.precision = "bf16";
  if (nn::cpu_has_bf16()) {
    EXPECT_NO_THROW(Trainer{o});
  } else {
    EXPECT_THROW(Trainer{o}, Error);
  }
}

// Without a GPU (or without the backend), asking for one is an error that says why, before any
// step.
TEST(TrainerOnCuda, WithoutAGpuTheRunSaysWhy) {
  if (nn::cuda::available()) GTEST_SKIP() << "a GPU is available";
  ScratchDir dir;
  PretrainOptions o = tiny(make_dataset(dir), dir.file("out"));
  o.device = nn::Device::Cuda;
  try {
    Trainer t(o);
    FAIL() << "a Trainer was made for a GPU that is not there";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "--device cuda: " + nn::cuda::unavailable_reason());
  }
}

}  // namespace
}  // namespace kglm::train
