#include "nn/encoder.hpp"

#include "core/error.hpp"
#include "nn/ops/activation.hpp"
#include "nn/ops/attention.hpp"
#include "nn/ops/dropout.hpp"
#include "nn/ops/elementwise.hpp"
#include "nn/ops/embedding.hpp"
#include "nn/ops/layer_norm.hpp"
#include "nn/ops/linear.hpp"

namespace kglm::nn {

namespace {

using Init = Parameter::Init;

// Dropout sites within one forward pass (see DropoutContext).
constexpr uint64_t kEmbeddingSite = 0;
uint64_t layer_site(size_t layer, uint64_t k) { return 1 + 3 * layer + k; }  // k: 0 probs, 1 attn out, 2 ffn out

}  // namespace

Encoder::Encoder(const ModelConfig& config, ParameterStore& params) : config_(config), params_(params) {
  workspace_ = Workspace(params.device());
  config_.validate();
  const int64_t h = config.hidden, f = config.intermediate;
  const std::string p = config.prefix();
  word_ = params.add(p + "embeddings.word_embeddings.weight", {config.vocab_size, h}, Init::Normal, true);
  position_ = params.add(p + "embeddings.position_embeddings.weight", {config.max_positions, h}, Init::Normal, true);
  token_type_ = params.add(p + "embeddings.token_type_embeddings.weight", {config.type_vocab, h}, Init::Normal, true);
  emb_ln_g_ = params.add(p + "embeddings.LayerNorm.weight", {h}, Init::Ones, false);
  emb_ln_b_ = params.add(p + "embeddings.LayerNorm.bias", {h}, Init::Zeros, false);
  for (int64_t l = 0; l < config.layers; ++l) {
    const std::string n = p + "encoder.layer." + std::to_string(l) + ".";
    const std::string self = n + "attention.self.";
    Layer layer{};
    // q, k and v are one [3H, H] projection (one sgemm); checkpoints still name them apart.
    layer.qkv_w = params.add(
        self + "qkv.weight", {3 * h, h}, Init::Normal, true,
        {{self + "query.weight", 0, h}, {self + "key.weight", h, 2 * h}, {self + "value.weight", 2 * h, 3 * h}});
    layer.qkv_b =
        params.add(self + "qkv.bias", {3 * h}, Init::Zeros, false,
                   {{self + "query.bias", 0, h}, {self + "key.bias", h, 2 * h}, {self + "value.bias", 2 * h, 3 * h}});
    layer.out_w = params.add(n + "attention.output.dense.weight", {h, h}, Init::Normal, true);
    layer.out_b = params.add(n + "attention.output.dense.bias", {h}, Init::Zeros, false);
    layer.ln1_g = params.add(n + "attention.output.LayerNorm.weight", {h}, Init::Ones, false);
    layer.ln1_b = params.add(n + "attention.output.LayerNorm.bias", {h}, Init::Zeros, false);
    layer.up_w = params.add(n + "intermediate.dense.weight", {f, h}, Init::Normal, true);
    layer.up_b = params.add(n + "intermediate.dense.bias", {f}, Init::Zeros, false);
    layer.down_w = params.add(n + "output.dense.weight", {h, f}, Init::Normal, true);
    layer.down_b = params.add(n + "output.dense.bias", {h}, Init::Zeros, false);
    layer.ln2_g = params.add(n + "output.LayerNorm.weight", {h}, Init::Ones, false);
    layer.ln2_b = params.add(n + "output.LayerNorm.bias", {h}, Init::Zeros, false);
    layers_.push_back(std::move(layer));
  }
}

void Encoder::ensure_buffers(int64_t batch, int64_t seq) {
  if (batch == batch_ && seq == seq_) return;
  batch_ = batch;
  seq_ = seq;
  workspace_.begin();
  const int64_t n = batch * seq, h = config_.hidden, f = config_.intermediate, heads = config_.heads;
  const DType a = params_.compute_dtype();  // activations and their gradients; statistics stay F32
  ids_ = workspace_.buffer({n}, DType::I32);
  positions_ = workspace_.buffer({n}, DType::I32);
  types_ = workspace_.buffer({n}, DType::I32);
  key_mask_ = workspace_.buffer({batch, seq}, DType::I32);
  emb_sum_ = workspace_.buffer({n, h}, a);
  emb_mean_ = workspace_.buffer({n});
  emb_rstd_ = workspace_.buffer({n});
  emb_out_ = workspace_.buffer({n, h}, a);
  emb_mask_ = workspace_.buffer({n, h}, DType::U8);
  for (Layer& L : layers_) {
    L.qkv = workspace_.buffer({n, 3 * h}, a);
    L.ctx = workspace_.buffer({n, h}, a);
    L.probs = workspace_.buffer({batch, heads, seq, seq}, a);
    L.probs_mask = workspace_.buffer({batch, heads, seq, seq}, DType::U8);
    L.sum1 = workspace_.buffer({n, h}, a);
    L.attn_mask = workspace_.buffer({n, h}, DType::U8);
    L.ln1_mean = workspace_.buffer({n});
    L.ln1_rstd = workspace_.buffer({n});
    L.h1 = workspace_.buffer({n, h}, a);
    L.ff_pre = workspace_.buffer({n, f}, a);
    L.ff_act = workspace_.buffer({n, f}, a);
    L.ff_mask = workspace_.buffer({n, h}, DType::U8);
    L.sum2 = workspace_.buffer({n, h}, a);
    L.ln2_mean = workspace_.buffer({n});
    L.ln2_rstd = workspace_.buffer({n});
    L.out = workspace_.buffer({n, h}, a);
  }
  d_sum_ = workspace_.buffer({n, h}, a);
  d_h1_ = workspace_.buffer({n, h}, a);
  d_ff_ = workspace_.buffer({n, f}, a);
  d_qkv_ = workspace_.buffer({n, 3 * h}, a);
  d_ctx_ = workspace_.buffer({n, h}, a);
  d_x_ = workspace_.buffer({n, h}, a);
}

DropoutKey DropoutContext::key(uint64_t site, int64_t elements) const {
  DropoutKey k{seed, stream * 256 + site, 0};
  if (first_row == 0) return k;
  if (rows == 0 || elements < 0 || static_cast<uint64_t>(elements) % rows != 0)
    throw Error("dropout: " + std::to_string(elements) + " elements are not " + std::to_string(rows) + " equal rows");
  k.first = first_row * (static_cast<uint64_t>(elements) / rows);
  return k;
}

Tensor position_ids(const Tensor& input_ids, int64_t batch, int64_t seq, const ModelConfig& config) {
  check_shape(input_ids, {batch * seq}, "encoder", "input_ids");
  Tensor positions = Tensor::empty({batch * seq}, DType::I32);
  const int32_t* id = input_ids.data<int32_t>();
  int32_t* pos = positions.data<int32_t>();
  const bool roberta = config.architecture == Architecture::XlmRoberta;
  const auto pad = static_cast<int32_t>(config.pad_token_id);
  for (int64_t b = 0; b < batch; ++b) {
    int32_t count = 0;
    for (int64_t t = 0; t < seq; ++t) {
      const int64_t i = b * seq + t;
      pos[i] = roberta ? (id[i] == pad ? pad : pad + ++count) : static_cast<int32_t>(t);
      if (pos[i] >= config.max_positions)
        throw Error("encoder: sequence of " + std::to_string(seq) + " tokens is longer than the model's " +
                    std::to_string(config.max_positions) + " positions allow");
    }
  }
  return positions;
}

void Encoder::embeddings_forward(const EncoderBatch& batch, const DropoutContext& dropout) {
  const int64_t n = batch.batch * batch.seq;
  check_shape(batch.input_ids, {n}, "encoder", "input_ids");
  check_shape(batch.attention_mask, {n}, "encoder", "attention_mask");
  ids_.copy_from(batch.input_ids);
  key_mask_.copy_from(batch.attention_mask.view({batch.batch, batch.seq}));
  if (batch.token_type_ids.defined()) {
    types_.copy_from(batch.token_type_ids.view({n}));
  } else {
    types_.zero();
  }

  if (batch.position_ids.defined()) {
    check_shape(batch.position_ids, {n}, "encoder", "position_ids");
    positions_.copy_from(batch.position_ids);
  } else {
    positions_.copy_from(position_ids(batch.input_ids, batch.batch, batch.seq, config_));
  }

  embedding_forward(ids_, param(word_), emb_sum_, GradMode::Overwrite);
  embedding_forward(positions_, param(position_), emb_sum_, GradMode::Accumulate);
  embedding_forward(types_, param(token_type_), emb_sum_, GradMode::Accumulate);
  layer_norm_forward(emb_sum_, param(emb_ln_g_), param(emb_ln_b_), config_.layer_norm_eps, emb_out_, emb_mean_,
                     emb_rstd_);
  dropout_forward(emb_out_, hidden_p_, dropout.key(kEmbeddingSite, emb_out_.numel()), emb_out_, emb_mask_);
}

const Tensor& Encoder::forward(const EncoderBatch& batch, const DropoutContext& dropout) {
  ensure_buffers(batch.batch, batch.seq);
  hidden_p_ = dropout.training ? config_.hidden_dropout : 0.0f;
  attention_p_ = dropout.training ? config_.attention_dropout : 0.0f;
  embeddings_forward(batch, dropout);
  for (size_t l = 0; l < layers_.size(); ++l) layer_forward(l, l == 0 ? emb_out_ : layers_[l - 1].out, dropout);
  return layers_.back().out;
}

void Encoder::layer_forward(size_t l, const Tensor& x, const DropoutContext& dropout) {
  Layer& L = layers_[l];
  const AttentionShape shape{batch_, seq_, config_.heads, config_.hidden};
  linear_forward(x, param(L.qkv_w), param(L.qkv_b), L.qkv);
  Tensor ctx = L.ctx.view({batch_, seq_, config_.hidden});
  attention_forward(L.qkv.view({batch_, seq_, 3 * config_.hidden}), key_mask_, shape, attention_p_,
                    dropout.key(layer_site(l, 0), L.probs.numel()), ctx, L.probs, L.probs_mask);
  // sum1 = dropout(dense(ctx)) + x, then LayerNorm (post-LN).
  linear_forward(L.ctx, param(L.out_w), param(L.out_b), L.sum1);
  dropout_forward(L.sum1, hidden_p_, dropout.key(layer_site(l, 1), L.sum1.numel()), L.sum1, L.attn_mask);
  add_layer_norm_forward(L.sum1, x, param(L.ln1_g), param(L.ln1_b), config_.layer_norm_eps, L.sum1, L.h1, L.ln1_mean,
                         L.ln1_rstd);
  // Feed-forward: sum2 = dropout(down(gelu(up(h1)))) + h1, then LayerNorm.
  linear_forward(L.h1, param(L.up_w), param(L.up_b), L.ff_pre);
  gelu_forward(L.ff_pre, L.ff_act);
  linear_forward(L.ff_act, param(L.down_w), param(L.down_b), L.sum2);
  dropout_forward(L.sum2, hidden_p_, dropout.key(layer_site(l, 2), L.sum2.numel()), L.sum2, L.ff_mask);
  add_layer_norm_forward(L.sum2, L.h1, param(L.ln2_g), param(L.ln2_b), config_.layer_norm_eps, L.sum2, L.out,
                         L.ln2_mean, L.ln2_rstd);
}

void Encoder::layer_backward(size_t l, const Tensor& x, Tensor& dout, Tensor& dx) {
  Layer& L = layers_[l];
  const AttentionShape shape{batch_, seq_, config_.heads, config_.hidden};
  // Output LayerNorm; its input was ff + h1, so the gradient reaches h1 directly and via the FFN.
  layer_norm_backward(dout, L.sum2, param(L.ln2_g), L.ln2_mean, L.ln2_rstd, d_sum_, grad(L.ln2_g), grad(L.ln2_b));
  d_h1_.copy_from(d_sum_);
  dropout_backward(d_sum_, L.ff_mask, hidden_p_, d_sum_);
  linear_backward(d_sum_, L.ff_act, param(L.down_w), d_ff_, grad(L.down_w), grad(L.down_b));
  gelu_backward(d_ff_, L.ff_pre, d_ff_);
  linear_backward(d_ff_, L.h1, param(L.up_w), d_h1_, grad(L.up_w), grad(L.up_b), GradMode::Accumulate);
  // Attention block: LayerNorm of (attention output + x).
  layer_norm_backward(d_h1_, L.sum1, param(L.ln1_g), L.ln1_mean, L.ln1_rstd, d_sum_, grad(L.ln1_g), grad(L.ln1_b));
  if (dx.defined()) dx.copy_from(d_sum_);
  dropout_backward(d_sum_, L.attn_mask, hidden_p_, d_sum_);
  linear_backward(d_sum_, L.ctx, param(L.out_w), d_ctx_, grad(L.out_w), grad(L.out_b));
  Tensor dqkv = d_qkv_.view({batch_, seq_, 3 * config_.hidden});
  attention_backward(d_ctx_.view({batch_, seq_, config_.hidden}), L.qkv.view({batch_, seq_, 3 * config_.hidden}),
                     L.probs, L.probs_mask, shape, attention_p_, dqkv);
  linear_backward(d_qkv_, x, param(L.qkv_w), dx, grad(L.qkv_w), grad(L.qkv_b), GradMode::Accumulate);
}

void Encoder::backward(Tensor& dhidden) {
  check_shape(dhidden, {batch_ * seq_, config_.hidden}, "encoder backward", "dhidden");
  // dhidden and d_x_ alternate as "gradient w.r.t. this layer's output / input".
  Tensor* dout = &dhidden;
  Tensor* dx = &d_x_;
  Tensor none;
  auto final_from = [&](int64_t offset) {
    if (gradients_final_) gradients_final_(offset);
  };
  for (size_t l = layers_.size(); l-- > 0;) {
    const bool below_needed = embeddings_trained_ || l > first_trained_layer_;
    layer_backward(l, l == 0 ? emb_out_ : layers_[l - 1].out, *dout, below_needed ? *dx : none);
    const Layer& L = layers_[l];
    int64_t lowest = params_.count();
    for (size_t i : L.parameters()) lowest = std::min(lowest, params_[i].offset);
    final_from(lowest);
    if (!below_needed) return final_from(0);
    std::swap(dout, dx);
  }
  // *dout is now the gradient w.r.t. the embeddings' output.
  dropout_backward(*dout, emb_mask_, hidden_p_, *dout);
  layer_norm_backward(*dout, emb_sum_, param(emb_ln_g_), emb_mean_, emb_rstd_, *dx, grad(emb_ln_g_), grad(emb_ln_b_));
  embedding_backward(ids_, *dx, grad(word_));
  embedding_backward(positions_, *dx, grad(position_));
  embedding_backward(types_, *dx, grad(token_type_));
  final_from(0);
}

void Encoder::freeze_below(size_t trained_layers, bool train_embeddings) {
  if (trained_layers > layers_.size())
    throw Error("encoder: cannot train the last " + std::to_string(trained_layers) + " of " +
                std::to_string(layers_.size()) + " layers");
  if (trained_layers == 0 && !train_embeddings) throw Error("encoder: nothing left to train");
  first_trained_layer_ = layers_.size() - trained_layers;
  embeddings_trained_ = train_embeddings;
  if (!train_embeddings)
    for (size_t i : {word_, position_, token_type_, emb_ln_g_, emb_ln_b_}) params_.freeze(i);
  for (size_t l = 0; l < first_trained_layer_; ++l) {
    const Layer& L = layers_[l];
    for (size_t i : L.parameters()) params_.freeze(i);
  }
}

const Tensor& Encoder::hidden_state(size_t i) const {
  if (i > layers_.size()) throw Error("encoder: no hidden state " + std::to_string(i));
  return i == 0 ? emb_out_ : layers_[i - 1].out;
}

}  // namespace kglm::nn
