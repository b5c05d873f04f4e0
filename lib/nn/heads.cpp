#include "nn/heads.hpp"

#include "core/error.hpp"
#include "nn/ops/activation.hpp"
#include "nn/ops/block_scores.hpp"
#include "nn/ops/dropout.hpp"
#include "nn/ops/elementwise.hpp"
#include "nn/ops/layer_norm.hpp"
#include "nn/ops/linear.hpp"
#include "nn/ops/op_times.hpp"

namespace kglm::nn {

namespace {

using Init = Parameter::Init;

// Dropout sites of the heads, after the encoder's (see DropoutContext).
constexpr uint64_t kHeadSiteFirst = 250, kHeadSiteSecond = 251;

// A batch's index and weight tensors are built on the host; a head on a GPU works on copies there.
// Returns `t` itself when it is undefined or already on `device`, else its copy, kept in `copy`.
const Tensor& on(Device device, const Tensor& t, Tensor& copy) {
  if (!t.defined() || t.device() == device) return t;
  copy = t.to(device);
  return copy;
}

// The loss of a head's logits; dlogits is written only when training.
CrossEntropyResult head_loss(const Tensor& logits, const Tensor& targets, Tensor& dlogits, bool need_grad,
                             double grad_scale) {
  Tensor none, copy;
  return cross_entropy(logits, on(logits.device(), targets, copy), need_grad ? dlogits : none, grad_scale);
}

}  // namespace

MlmHead::MlmHead(const ModelConfig& config, ParameterStore& params, size_t word_embeddings)
    : config_(config), params_(params), word_(word_embeddings) {
  workspace_ = Workspace(params.device());
  const int64_t h = config.hidden;
  const bool bert = config.architecture == Architecture::Bert;
  const std::string dense = bert ? "cls.predictions.transform.dense." : "lm_head.dense.";
  const std::string ln = bert ? "cls.predictions.transform.LayerNorm." : "lm_head.layer_norm.";
  dense_w_ = params.add(dense + "weight", {h, h}, Init::Normal, true);
  dense_b_ = params.add(dense + "bias", {h}, Init::Zeros, false);
  ln_g_ = params.add(ln + "weight", {h}, Init::Ones, false);
  ln_b_ = params.add(ln + "bias", {h}, Init::Zeros, false);
  bias_ = params.add(bert ? "cls.predictions.bias" : "lm_head.bias", {config.vocab_size}, Init::Zeros, false);
}

void MlmHead::ensure(int64_t m) {
  if (m == m_) return;  // the masked-row count changes nearly every batch: views of grow-only buffers
  m_ = m;
  const int64_t h = config_.hidden, v = config_.vocab_size;
  const DType a = params_.compute_dtype();  // activations; the LayerNorm statistics stay F32
  workspace_.begin();
  x_ = workspace_.buffer({m, h}, a);
  pre_ = workspace_.buffer({m, h}, a);
  act_ = workspace_.buffer({m, h}, a);
  mean_ = workspace_.buffer({m});
  rstd_ = workspace_.buffer({m});
  normed_ = workspace_.buffer({m, h}, a);
  logits_ = workspace_.buffer({m, v}, a);  // and, after a training forward, their gradient
  dx_ = workspace_.buffer({m, h}, a);
  dpre_ = workspace_.buffer({m, h}, a);
}

CrossEntropyResult MlmHead::forward(const Tensor& hidden, const Tensor& rows, const Tensor& targets, bool need_grad,
                                    double grad_scale, const Tensor& row_weights, Tensor* row_losses) {
  const OpClassScope scope("head");
  predict(hidden, rows);
  const int64_t m = rows.numel();
  const Device device = params_.device();
  if (!row_weights.defined() && row_losses == nullptr)
    return head_loss(logits_, targets, logits_, need_grad, grad_scale);
  Tensor none, targets_copy, weights_copy, losses;
  if (row_losses) losses = row_losses->device() == device ? *row_losses : Tensor::empty({m}, DType::F64, device);
  CrossEntropyResult result = cross_entropy(logits_, on(device, targets, targets_copy), need_grad ? logits_ : none,
                                            grad_scale, on(device, row_weights, weights_copy), losses);
  if (row_losses && losses.raw() != row_losses->raw()) row_losses->copy_from(losses);
  return result;
}

const Tensor& MlmHead::predict(const Tensor& hidden, const Tensor& rows) {
  const OpClassScope scope("head");
  check_dtype(rows, DType::I32, "mlm head", "rows");
  ensure(rows.numel());
  rows_ = rows.to(params_.device());
  gather_rows(hidden, rows_, x_);
  linear_forward(x_, params_[dense_w_].compute, params_[dense_b_].compute, pre_);
  gelu_forward(pre_, act_);
  layer_norm_forward(act_, params_[ln_g_].compute, params_[ln_b_].compute, config_.layer_norm_eps, normed_, mean_,
                     rstd_);
  // The decoder is the word-embedding matrix itself ([V, H], i.e. nn.Linear's [out, in]).
  linear_forward(normed_, params_[word_].compute, params_[bias_].compute, logits_);
  return logits_;
}

void MlmHead::backward(Tensor& dhidden) {
  const OpClassScope scope("head");
  linear_backward(logits_, normed_, params_[word_].compute, dx_, params_[word_].grad, params_[bias_].grad);
  layer_norm_backward(dx_, act_, params_[ln_g_].compute, mean_, rstd_, dpre_, params_[ln_g_].grad, params_[ln_b_].grad);
  gelu_backward(dpre_, pre_, dpre_);
  linear_backward(dpre_, x_, params_[dense_w_].compute, dx_, params_[dense_w_].grad, params_[dense_b_].grad);
  scatter_add_rows(dx_, rows_, dhidden);
}

CrossEntropyResult ClassifierLogits::loss(const Tensor& targets, bool need_grad, double grad_scale, int64_t group) {
  const OpClassScope scope("head");
  if (group <= 1) return head_loss(logits_, targets, dlogits_, need_grad, grad_scale);
  if (logits_.numel() % group != 0)
    throw Error("classifier: logits do not split into groups of " + std::to_string(group));
  const Shape grouped{logits_.numel() / group, group};
  Tensor dgrouped = dlogits_.view(grouped);
  return head_loss(logits_.view(grouped), targets, dgrouped, need_grad, grad_scale);
}

SequenceClassificationHead::SequenceClassificationHead(const ModelConfig& config, ParameterStore& params,
                                                       int64_t labels, Pooling pooling, const std::string& name)
    : config_(config), params_(params), labels_(labels) {
  if (labels < 1) throw Error("sequence classification head: needs at least one label");
  workspace_ = Workspace(params.device());
  const int64_t h = config.hidden;
  const bool pooler = config.architecture == Architecture::Bert || pooling == Pooling::Pooler;
  dropout_first_ = !pooler;
  const std::string dense = pooler ? config.prefix() + "pooler.dense." : name + ".dense.";
  const std::string out = pooler ? name + "." : name + ".out_proj.";
  dense_w_ = params.add(dense + "weight", {h, h}, Init::Normal, true);
  dense_b_ = params.add(dense + "bias", {h}, Init::Zeros, false);
  out_w_ = params.add(out + "weight", {labels, h}, Init::Normal, true);
  out_b_ = params.add(out + "bias", {labels}, Init::Zeros, false);
}

const Tensor& SequenceClassificationHead::forward(const Tensor& hidden, const PackedSequences& seqs,
                                                  const DropoutContext& dropout) {
  const OpClassScope scope("head");
  const int64_t h = config_.hidden, batch = seqs.sequences();
  std::vector<int32_t> first(seqs.offsets.begin(), seqs.offsets.end() - 1);
  if (first != first_rows_) {
    first_rows_ = std::move(first);
    rows_ = Tensor::from<int32_t>({batch}, first_rows_).to(params_.device());
    const DType a = params_.compute_dtype();
    workspace_.begin();
    for (Tensor* t : {&first_, &pooled_, &pooled_drop_, &dpooled_, &dfirst_}) *t = workspace_.buffer({batch, h}, a);
    first_mask_ = workspace_.buffer({batch, h}, DType::U8);
    pooled_mask_ = workspace_.buffer({batch, h}, DType::U8);
    logits_ = workspace_.buffer({batch, labels_}, a);
    dlogits_ = workspace_.buffer({batch, labels_}, a);
  }
  p_ = dropout.training ? config_.hidden_dropout : 0.0f;
  gather_rows(hidden, rows_, first_);
  if (dropout_first_) dropout_forward(first_, p_, dropout.key(kHeadSiteFirst, first_.numel()), first_, first_mask_);
  linear_forward(first_, params_[dense_w_].compute, params_[dense_b_].compute, pooled_);
  tanh_forward(pooled_, pooled_);
  dropout_forward(pooled_, p_, dropout.key(kHeadSiteSecond, pooled_.numel()), pooled_drop_, pooled_mask_);
  linear_forward(pooled_drop_, params_[out_w_].compute, params_[out_b_].compute, logits_);
  return logits_;
}

void SequenceClassificationHead::backward(Tensor& dhidden) {
  const OpClassScope scope("head");
  linear_backward(dlogits_, pooled_drop_, params_[out_w_].compute, dpooled_, params_[out_w_].grad,
                  params_[out_b_].grad);
  dropout_backward(dpooled_, pooled_mask_, p_, dpooled_);
  tanh_backward(dpooled_, pooled_, dpooled_);
  linear_backward(dpooled_, first_, params_[dense_w_].compute, dfirst_, params_[dense_w_].grad, params_[dense_b_].grad);
  if (dropout_first_) dropout_backward(dfirst_, first_mask_, p_, dfirst_);
  scatter_add_rows(dfirst_, rows_, dhidden);
}

EntityPairClassificationHead::EntityPairClassificationHead(const ModelConfig& config, ParameterStore& params,
                                                           int64_t labels)
    : config_(config), params_(params), labels_(labels) {
  if (labels < 1) throw Error("entity-pair classification head: needs at least one label");
  workspace_ = Workspace(params.device());
  w_ = params.add("classifier.weight", {labels, 2 * config.hidden}, Init::Normal, true);
  b_ = params.add("classifier.bias", {labels}, Init::Zeros, false);
}

const Tensor& EntityPairClassificationHead::forward(const Tensor& hidden, const Tensor& rows,
                                                    const DropoutContext& dropout) {
  const OpClassScope scope("head");
  check_dtype(rows, DType::I32, "entity-pair head", "rows");
  if (rows.numel() % 2 != 0) throw Error("entity-pair head: rows must come in pairs");
  const int64_t batch = rows.numel() / 2, h = config_.hidden;
  if (batch != batch_) {
    batch_ = batch;
    const DType a = params_.compute_dtype();
    workspace_.begin();
    pair_ = workspace_.buffer({batch, 2 * h}, a);
    dropped_ = workspace_.buffer({batch, 2 * h}, a);
    ddropped_ = workspace_.buffer({batch, 2 * h}, a);
    mask_ = workspace_.buffer({batch, 2 * h}, DType::U8);
    logits_ = workspace_.buffer({batch, labels_}, a);
    dlogits_ = workspace_.buffer({batch, labels_}, a);
  }
  rows_ = rows.to(params_.device());
  // Row 2b is e1's state and row 2b + 1 e2's: gathered as [2B, H], they are [B, 2H] concatenated.
  Tensor gathered = pair_.view({2 * batch, h});
  gather_rows(hidden, rows_, gathered);
  p_ = dropout.training ? config_.hidden_dropout : 0.0f;
  dropout_forward(pair_, p_, dropout.key(kHeadSiteFirst, pair_.numel()), dropped_, mask_);
  linear_forward(dropped_, params_[w_].compute, params_[b_].compute, logits_);
  return logits_;
}

void EntityPairClassificationHead::backward(Tensor& dhidden) {
  const OpClassScope scope("head");
  linear_backward(dlogits_, dropped_, params_[w_].compute, ddropped_, params_[w_].grad, params_[b_].grad);
  dropout_backward(ddropped_, mask_, p_, ddropped_);
  scatter_add_rows(ddropped_.view({2 * batch_, config_.hidden}), rows_, dhidden);
}

TokenClassificationHead::TokenClassificationHead(const ModelConfig& config, ParameterStore& params, int64_t labels)
    : config_(config), params_(params), labels_(labels) {
  if (labels < 1) throw Error("token classification head: needs at least one label");
  workspace_ = Workspace(params.device());
  w_ = params.add("classifier.weight", {labels, config.hidden}, Init::Normal, true);
  b_ = params.add("classifier.bias", {labels}, Init::Zeros, false);
}

const Tensor& TokenClassificationHead::forward(const Tensor& hidden, const Tensor& rows, const Tensor& numbers,
                                               const DropoutContext& dropout) {
  const OpClassScope scope("head");
  check_dtype(rows, DType::I32, "token head", "rows");
  const int64_t n = rows.numel();
  if (!logits_.defined() || logits_.dim(0) != n) {
    const DType a = params_.compute_dtype();
    workspace_.begin();
    gathered_ = workspace_.buffer({n, config_.hidden}, a);
    dropped_ = workspace_.buffer({n, config_.hidden}, a);
    ddropped_ = workspace_.buffer({n, config_.hidden}, a);
    mask_ = workspace_.buffer({n, config_.hidden}, DType::U8);
    logits_ = workspace_.buffer({n, labels_}, a);
    dlogits_ = workspace_.buffer({n, labels_}, a);
  }
  rows_ = rows.to(params_.device());
  gather_rows(hidden, rows_, gathered_);
  p_ = dropout.training ? config_.hidden_dropout : 0.0f;
  if (p_ > 0) numbers_ = numbers.to(params_.device());
  dropout_forward(gathered_, p_, dropout.site_key(kHeadSiteFirst), p_ > 0 ? numbers_ : Tensor(), dropped_, mask_);
  linear_forward(dropped_, params_[w_].compute, params_[b_].compute, logits_);
  return logits_;
}

void TokenClassificationHead::backward(Tensor& dhidden) {
  const OpClassScope scope("head");
  linear_backward(dlogits_, dropped_, params_[w_].compute, ddropped_, params_[w_].grad, params_[b_].grad);
  dropout_backward(ddropped_, mask_, p_, ddropped_);
  scatter_add_rows(ddropped_, rows_, dhidden);
}

QuestionAnsweringHead::QuestionAnsweringHead(const ModelConfig& config, ParameterStore& params)
    : config_(config), params_(params) {
  workspace_ = Workspace(params.device());
  w_ = params.add("qa_outputs.weight", {2, config.hidden}, Init::Normal, true);
  b_ = params.add("qa_outputs.bias", {2}, Init::Zeros, false);
}

const Tensor& QuestionAnsweringHead::forward(const Tensor& hidden, const PackedSequences& seqs) {
  const OpClassScope scope("head");
  const int64_t n = hidden.dim(0), batch = seqs.sequences(), t = std::max<int64_t>(seqs.max_len, 1);
  if (seqs.offsets != offsets_ || !scores_.defined() || scores_.dim(0) != n + 1) {
    offsets_ = seqs.offsets;
    const DType a = params_.compute_dtype();
    workspace_.begin();
    scores_ = workspace_.buffer({n + 1, 2}, a);
    dscores_ = workspace_.buffer({n + 1, 2}, a);
    logits_ = workspace_.buffer({2 * batch, t}, a);
    dlogits_ = workspace_.buffer({2 * batch, t}, a);
    // The padding positions read the extra row, which holds kNoScore (in the compute dtype).
    Tensor fill = Tensor::from<float>({1, 2}, std::vector<float>{kNoScore, kNoScore});
    if (a != DType::F32) {
      Tensor converted = Tensor::empty({1, 2}, a);
      convert(fill, converted);
      fill = converted;
    }
    scores_.rows(n, n + 1).copy_from(fill);
    std::vector<int32_t> index(static_cast<size_t>(2 * batch * t));
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t p = 0; p < t; ++p)
        for (int64_t k = 0; k < 2; ++k)
          index[static_cast<size_t>((k * batch + b) * t + p)] =
              static_cast<int32_t>(2 * (p < seqs.length(b) ? seqs.offsets[static_cast<size_t>(b)] + p : n) + k);
    index_ = Tensor::from<int32_t>({2 * batch * t}, index).to(params_.device());
  }
  hidden_ = hidden;
  Tensor token_scores = scores_.rows(0, n);
  linear_forward(hidden, params_[w_].compute, params_[b_].compute, token_scores);
  Tensor flat_logits = logits_.view({logits_.numel(), 1});
  gather_rows(scores_.view({2 * (n + 1), 1}), index_, flat_logits);
  return logits_;
}

void QuestionAnsweringHead::backward(Tensor& dhidden) {
  const OpClassScope scope("head");
  const int64_t n = hidden_.dim(0);
  dscores_.zero();
  Tensor flat = dscores_.view({2 * (n + 1), 1});
  scatter_add_rows(dlogits_.view({dlogits_.numel(), 1}), index_, flat);
  linear_backward(dscores_.rows(0, n), hidden_, params_[w_].compute, dhidden, params_[w_].grad, params_[b_].grad,
                  GradMode::Accumulate);
}

}  // namespace kglm::nn
