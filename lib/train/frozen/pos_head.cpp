// The PoS tagger of the frozen-feature evaluation: the mix, a ReLU layer of --mlp-size with
// dropout, a linear layer to the tags (the paper's "simple MLP").
#include <optional>

#include "nn/ops/cross_entropy.hpp"
#include "nn/ops/elementwise.hpp"
#include "nn/ops/linear.hpp"
#include "train/frozen/frozen_head.hpp"
#include "train/tasks/task_model.hpp"

namespace kglm::train::frozen {

namespace {

class PosHead final : public FrozenHead {
 public:
  PosHead(const HeadShape& s, nn::Device device)
      : FrozenHead(device, s.layers),
        hidden_(params_, "tagger.hidden", s.width, s.mlp, s.dropout),
        out_(add_linear(params_, "tagger.output", s.mlp, s.tags)),
        tags_(s.tags) {}

  double train_batch(const FrozenData& t, std::span<const uint32_t> sentences, const nn::Tensor& x, uint64_t seed,
                     uint64_t step, int64_t& counted) override {
    const nn::Tensor targets = word_targets(t, sentences, t.tags).to(params_.device());
    const nn::DropoutKey key{seed, step * 16 + 1, 0};
    const nn::Tensor& logits = forward(x, &key);
    nn::Tensor dlogits = nn::Tensor::empty(logits.shape(), nn::DType::F32, params_.device());
    const nn::CrossEntropyResult probe = nn::cross_entropy(logits, targets, dlogits, 1.0);
    counted = probe.counted;
    if (counted == 0) return 0;
    nn::scale(dlogits, 1.0 / static_cast<double>(counted));
    nn::Tensor dh =
        nn::Tensor::empty({logits.dim(0), params_[out_.weight].value.dim(1)}, nn::DType::F32, params_.device());
    nn::linear_backward(dlogits, *hidden_out_, params_[out_.weight].compute, dh, params_[out_.weight].grad,
                        params_[out_.bias].grad);
    nn::Tensor dmix;
    if (x.dim(0) > 1) dmix = nn::Tensor::empty({x.dim(1), x.dim(2)}, nn::DType::F32, params_.device());
    hidden_.backward(dh, dmix);
    if (dmix.defined()) mix_.backward(dmix);
    return probe.loss_sum / static_cast<double>(counted);
  }

  void predict(const FrozenData& t, std::span<const uint32_t> sentences, const nn::Tensor& x,
               Predictions& out) override {
    const std::vector<int32_t> best = tasks::argmax_rows(forward(x, nullptr));
    size_t k = 0;
    for (uint32_t s : sentences)
      for (int64_t w = t.first[s]; w < t.first[s + 1]; ++w) out.tags[static_cast<size_t>(w)] = best[k++];
  }

 private:
  const nn::Tensor& forward(const nn::Tensor& x, const nn::DropoutKey* key) {
    hidden_out_ = &hidden_.forward(mix_.forward(x), key);
    if (!logits_.defined() || logits_.dim(0) != x.dim(1))
      logits_ = nn::Tensor::empty({x.dim(1), tags_}, nn::DType::F32, params_.device());
    nn::linear_forward(*hidden_out_, params_[out_.weight].compute, params_[out_.bias].compute, logits_);
    return logits_;
  }

  FeedForward hidden_;
  LinearParams out_;
  int64_t tags_;
  const nn::Tensor* hidden_out_ = nullptr;
  nn::Tensor logits_;
};

}  // namespace

std::unique_ptr<FrozenHead> make_pos_head(const HeadShape& shape, nn::Device device) {
  return std::make_unique<PosHead>(shape, device);
}

}  // namespace kglm::train::frozen
