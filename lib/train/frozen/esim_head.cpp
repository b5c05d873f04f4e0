// ESIM (Chen et al. 2017, "Enhanced LSTM for Natural Language Inference") on frozen features, the
// multilingual ELMo paper's XNLI model, with allennlp-models' esim.py layout and the sizes
// (h = --mlp-size, 300 by default):
//   input encoding   e = dropout(mix(x)); ā = BiLSTM_h(e) for both sentences (shared weights)
//   local inference  ã, b̃: soft alignment (nn/ops/soft_align.hpp); m = [ā; ã; ā − ã; ā ⊙ ã]
//   composition      v = BiLSTM_h(dropout(ReLU(m · W_pᵀ + b_p)))
//   pooling          [avg v_a; max v_a; avg v_b; max v_b] (nn/ops/segment_pool.hpp), dropout
//   output           a tanh layer of h with dropout (the ESIM paper's MLP; AllenNLP's config
//                    uses ReLU), then a linear layer to the labels; cross-entropy per pair.
// Dropout is --dropout at every site (0.5 in AllenNLP's config; the frozen tasks' default 0.33).
#include <vector>

#include "nn/ops/cross_entropy.hpp"
#include "nn/ops/dropout.hpp"
#include "nn/ops/elementwise.hpp"
#include "nn/ops/linear.hpp"
#include "nn/ops/segment_pool.hpp"
#include "nn/ops/soft_align.hpp"
#include "train/frozen/bilstm.hpp"
#include "train/frozen/frozen_head.hpp"
#include "train/tasks/task_model.hpp"

namespace kglm::train::frozen {

namespace {

using nn::DType;
using nn::Tensor;

// Dropout at one site of the head, with its mask for the backward pass.
class DropoutSite {
 public:
  explicit DropoutSite(float p) : p_(p) {}
  const Tensor& forward(const Tensor& x, const nn::DropoutKey* key) {
    dropped_ = key != nullptr && p_ > 0;
    if (!dropped_) return x;
    y_ = Tensor::empty(x.shape(), DType::F32, x.device());
    mask_ = Tensor::empty(x.shape(), DType::U8, x.device());
    nn::dropout_forward(x, p_, *key, y_, mask_);
    return y_;
  }
  // In place on dy.
  void backward(Tensor& dy) const {
    if (dropped_) nn::dropout_backward(dy, mask_, p_, dy);
  }

 private:
  float p_;
  bool dropped_ = false;
  Tensor y_, mask_;
};

class EsimHead final : public FrozenHead {
 public:
  EsimHead(const HeadShape& s, nn::Device device)
      : FrozenHead(device, s.layers),
        hidden_(s.mlp),
        input_dropout_(s.dropout),
        pooled_dropout_(s.dropout),
        input_encoder_(params_, "esim.input_encoder", s.width, s.mlp),
        projection_(params_, "esim.projection", 8 * s.mlp, s.mlp, s.dropout),
        inference_encoder_(params_, "esim.inference_encoder", s.mlp, s.mlp),
        output_hidden_(params_, "esim.output_hidden", 8 * s.mlp, s.mlp, s.dropout, Activation::tanh),
        output_(add_linear(params_, "esim.output", s.mlp, s.tags)),
        labels_(s.tags) {}

  double train_batch(const FrozenData& t, std::span<const uint32_t> examples, const Tensor& x, uint64_t seed,
                     uint64_t step, int64_t& counted) override {
    const nn::Device device = params_.device();
    std::vector<int32_t> gold;
    for (uint32_t e : examples) gold.push_back(t.labels[e]);
    const Tensor targets = Tensor::from({static_cast<int64_t>(gold.size())}, gold).to(device);
    const Tensor& logits = forward(t, examples, x, seed, step, true);
    Tensor dlogits = Tensor::empty(logits.shape(), DType::F32, device);
    const nn::CrossEntropyResult probe = nn::cross_entropy(logits, targets, dlogits, 1.0);
    counted = probe.counted;
    if (counted == 0) return 0;
    nn::scale(dlogits, 1.0 / static_cast<double>(counted));
    backward(x, dlogits);
    return probe.loss_sum / static_cast<double>(counted);
  }

  void predict(const FrozenData& t, std::span<const uint32_t> examples, const Tensor& x, Predictions& out) override {
    const std::vector<int32_t> best = tasks::argmax_rows(forward(t, examples, x, 0, 0, false));
    for (size_t i = 0; i < examples.size(); ++i) out.labels[examples[i]] = best[i];
  }

 private:
  const Tensor& forward(const FrozenData& t, std::span<const uint32_t> examples, const Tensor& x, uint64_t seed,
                        uint64_t step, bool training) {
    const nn::Device device = params_.device();
    const int64_t m = x.dim(1), pairs = static_cast<int64_t>(examples.size()), h2 = 2 * hidden_;
    // The batch's sentences: premise and hypothesis of each pair, consecutive rows of x.
    lengths_.clear();
    std::vector<int32_t> premises, hypotheses, segments;
    int32_t row = 0;
    for (uint32_t s : t.feature_sentences(examples)) {
      const auto n = static_cast<int32_t>(t.features->words(s));
      lengths_.push_back(n);
      (lengths_.size() % 2 == 1 ? premises : hypotheses).push_back(n);
      segments.insert(segments.end(), {row, n});
      row += n;
    }
    int64_t weights_size = 0;
    layout_ = nn::soft_align_layout(premises, hypotheses, weights_size).to(device);
    segments_ = Tensor::from({2 * pairs, 2}, segments).to(device);
    for (int k = 0; k < 4; ++k) {  // row r of each of the enhancement's four parts, viewed as [4M, 2h]
      std::vector<int32_t> index(static_cast<size_t>(m));
      for (int64_t r = 0; r < m; ++r) index[static_cast<size_t>(r)] = static_cast<int32_t>(4 * r + k);
      part_index_[k] = Tensor::from({m}, index).to(device);
    }
    const nn::DropoutKey keys[4] = {
        {seed, step * 16 + 1, 0}, {seed, step * 16 + 2, 0}, {seed, step * 16 + 3, 0}, {seed, step * 16 + 4, 0}};
    auto key = [&](int k) { return training ? &keys[k] : nullptr; };

    const Tensor& embedded = input_dropout_.forward(mix_.forward(x), key(0));
    encoded_ = input_encoder_.forward(embedded, lengths_);
    weights_ = Tensor::empty({weights_size}, DType::F32, device);
    aligned_ = Tensor::empty({m, h2}, DType::F32, device);
    nn::soft_align_forward(encoded_, layout_, weights_, aligned_);
    Tensor enhanced = Tensor::empty({m, 4 * h2}, DType::F32, device);
    Tensor parts = enhanced.view({4 * m, h2});
    Tensor scratch = Tensor::empty({m, h2}, DType::F32, device);
    nn::copy_rows_strided(encoded_, parts, 0, 4);
    nn::copy_rows_strided(aligned_, parts, 1, 4);
    scratch.copy_from(aligned_);
    nn::scale(scratch, -1.0);
    nn::add(encoded_, scratch, scratch);
    nn::copy_rows_strided(scratch, parts, 2, 4);
    nn::multiply(encoded_, aligned_, scratch);
    nn::copy_rows_strided(scratch, parts, 3, 4);
    enhanced_ = enhanced;
    const Tensor& composed = inference_encoder_.forward(projection_.forward(enhanced_, key(1)), lengths_);
    composed_rows_ = m;
    pooled_ = Tensor::empty({2 * pairs, 2 * h2}, DType::F32, device);
    argmax_ = Tensor::empty({2 * pairs, h2}, DType::I32, device);
    nn::segment_pool_forward(composed, segments_, pooled_, argmax_);
    pooled_pairs_ = pooled_.view({pairs, 4 * h2});  // [avg a; max a; avg b; max b] per pair
    const Tensor& pooled = pooled_dropout_.forward(pooled_pairs_, key(2));
    const Tensor& hidden = output_hidden_.forward(pooled, key(3));
    hidden_out_ = &hidden;
    logits_ = Tensor::empty({pairs, labels_}, DType::F32, device);
    nn::linear_forward(hidden, params_[output_.weight].compute, params_[output_.bias].compute, logits_);
    return logits_;
  }

  void backward(const Tensor& x, const Tensor& dlogits) {
    const nn::Device device = params_.device();
    const int64_t pairs = dlogits.dim(0), m = composed_rows_, h2 = 2 * hidden_;
    Tensor dhidden = Tensor::empty({pairs, hidden_}, DType::F32, device);
    nn::linear_backward(dlogits, *hidden_out_, params_[output_.weight].compute, dhidden, params_[output_.weight].grad,
                        params_[output_.bias].grad);
    Tensor dpooled = Tensor::empty({pairs, 4 * h2}, DType::F32, device);
    output_hidden_.backward(dhidden, dpooled);
    pooled_dropout_.backward(dpooled);
    Tensor dcomposed = Tensor::empty({m, h2}, DType::F32, device);
    nn::segment_pool_backward(dpooled.view({2 * pairs, 2 * h2}), segments_, argmax_, dcomposed);
    Tensor dprojected = Tensor::empty({m, hidden_}, DType::F32, device);
    inference_encoder_.backward(dcomposed, dprojected);
    Tensor denhanced = Tensor::empty({m, 4 * h2}, DType::F32, device);
    projection_.backward(dprojected, denhanced);
    // m = [ā; ã; ā − ã; ā ⊙ ã]: dā = d0 + d2 + d3 ⊙ ã, dã = d1 − d2 + d3 ⊙ ā.
    const Tensor parts = denhanced.view({4 * m, h2});
    Tensor d[4];
    for (int k = 0; k < 4; ++k) {
      d[k] = Tensor::empty({m, h2}, DType::F32, device);
      nn::gather_rows(parts, part_index_[k], d[k]);
    }
    Tensor dencoded = d[0], daligned = d[1], scratch = Tensor::empty({m, h2}, DType::F32, device);
    nn::add(dencoded, d[2], dencoded);
    nn::multiply(d[3], aligned_, scratch);
    nn::add(dencoded, scratch, dencoded);
    nn::scale(d[2], -1.0);
    nn::add(daligned, d[2], daligned);
    nn::multiply(d[3], encoded_, scratch);
    nn::add(daligned, scratch, daligned);
    Tensor dweights = Tensor::empty(weights_.shape(), DType::F32, device);
    nn::soft_align_backward(daligned, encoded_, layout_, weights_, dweights, scratch);
    nn::add(dencoded, scratch, dencoded);
    Tensor dembedded = Tensor::empty({m, x.dim(2)}, DType::F32, device);
    input_encoder_.backward(dencoded, dembedded);
    input_dropout_.backward(dembedded);
    if (x.dim(0) > 1) mix_.backward(dembedded);
  }

  int64_t hidden_;
  DropoutSite input_dropout_, pooled_dropout_;
  BiLstm input_encoder_;
  FeedForward projection_;
  BiLstm inference_encoder_;
  FeedForward output_hidden_;
  LinearParams output_;
  int64_t labels_;
  std::vector<int32_t> lengths_;
  Tensor layout_, segments_, part_index_[4], encoded_, weights_, aligned_, enhanced_, pooled_, pooled_pairs_, argmax_,
      logits_;
  int64_t composed_rows_ = 0;
  const Tensor* hidden_out_ = nullptr;
};

}  // namespace

std::unique_ptr<FrozenHead> make_esim_head(const HeadShape& shape, nn::Device device) {
  return std::make_unique<EsimHead>(shape, device);
}

}  // namespace kglm::train::frozen
