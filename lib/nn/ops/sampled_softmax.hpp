// ELMo's training softmax: TensorFlow's sampled_softmax_loss with its defaults as bilm-tf calls it
// (subtract_log_q, remove_accidental_hits), over classes drawn by the log-uniform (Zipfian)
// candidate sampler with unique=True from a vocabulary sorted by falling frequency. One draw of S
// classes serves every row of a batch (of one direction). For row r with target t:
//   true logit   h_r·w[t] + b[t] − log E(t)
//   sampled j    h_r·w[s_j] + b[s_j] − log E(s_j), left out where s_j = t (an accidental hit)
//   loss_r       log Σ exp(all logits) − true logit
// where E(k) is the expected count of class k in the sampler's draws. Evaluation uses the full
// softmax (linear_forward over the vocabulary and cross_entropy).
#pragma once

#include <cmath>
#include <cstdint>

#include "nn/ops/cross_entropy.hpp"
#include "nn/ops/host_device.hpp"
#include "nn/ops/linear.hpp"

namespace kglm {
class Rng;
}

namespace kglm::nn {

// The log-uniform distribution over [0, V) and the expected counts of a unique draw of `count`
// classes that took `tries` draws (TensorFlow's LogUniformSampler and its ExpectedCountHelper).
struct LogUniform {
  int64_t vocabulary = 0;
  int64_t count = 0;
  double tries = 0;

  // P(k) = (log(k + 2) − log(k + 1)) / log(V + 1).
  KGLM_HOST_DEVICE double probability(int64_t k) const {
    return ::log1p(1.0 / static_cast<double>(k + 1)) / ::log(static_cast<double>(vocabulary) + 1.0);
  }
  // log E(k): E = count · P(k) when no draw repeated, else 1 − (1 − P(k))^tries.
  KGLM_HOST_DEVICE double log_expected_count(int64_t k) const {
    const double p = probability(k);
    if (tries == static_cast<double>(count)) return ::log(p * static_cast<double>(count));
    return ::log(-::expm1(tries * ::log1p(-p)));
  }
};

struct SampledClasses {
  Tensor ids;  // I32 [S]: distinct classes, on the device of the loss's tensors
  LogUniform distribution;
};

// Draws `count` distinct classes of [0, vocabulary) from the log-uniform distribution, drawing
// again on a repeat (TensorFlow's unique=True), with `rng`; the ids go to `device`.
SampledClasses sample_log_uniform(int64_t count, int64_t vocabulary, Rng& rng, Device device = Device::Cpu);

// h [M, p]; w [V, p] and b [V] (the output embedding, shared by both directions); targets I32 [M]
// in [0, V). Returns the loss summed over the rows (counted = M; correct = rows whose true logit
// beats every sampled one). The gradients of grad_scale · that sum: dh [M, p] (skipped when
// undefined) written per dh_mode; dw [V, p] and db [V] (wide dtype) accumulated on the rows of the
// targets and of the sample only.
CrossEntropyResult sampled_softmax_loss(const Tensor& h, const Tensor& w, const Tensor& b, const Tensor& targets,
                                        const SampledClasses& sample, double grad_scale, Tensor& dh, Tensor& dw,
                                        Tensor& db, GradMode dh_mode = GradMode::Overwrite);

}  // namespace kglm::nn
