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

void Encoder::ensure_buffers(int64_t tokens, int64_t scores) {
  if (tokens == tokens_ && scores == scores_) return;
  tokens_ = tokens;
  scores_ = scores;
  workspace_.begin();  // grow-only: a batch no bigger than an earlier one allocates nothing
  const int64_t n = tokens, h = config_.hidden, f = config_.intermediate;
  const DType a = params_.compute_dtype();  // activations and their gradients; statistics stay F32
  ids_ = workspace_.buffer({n}, DType::I32);
  positions_ = workspace_.buffer({n}, DType::I32);
  types_ = workspace_.buffer({n}, DType::I32);
  numbers_ = workspace_.buffer({n}, DType::I64);
  emb_sum_ = workspace_.buffer({n, h}, a);
  emb_mean_ = workspace_.buffer({n});
  emb_rstd_ = workspace_.buffer({n});
  emb_out_ = workspace_.buffer({n, h}, a);
  emb_mask_ = workspace_.buffer({n, h}, DType::U8);
  for (Layer& L : layers_) {
    L.qkv = workspace_.buffer({n, 3 * h}, a);
    L.ctx = workspace_.buffer({n, h}, a);
    L.probs = workspace_.buffer({scores}, a);
    L.probs_mask = workspace_.buffer({scores}, DType::U8);
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

namespace {

// The positions of one sequence's tokens, written to pos (see position_ids()).
void number_positions(const int32_t* id, int64_t n, const ModelConfig& config, int32_t* pos) {
  const bool roberta = config.architecture == Architecture::XlmRoberta;
  const auto pad = static_cast<int32_t>(config.pad_token_id);
  int32_t count = 0;
  for (int64_t t = 0; t < n; ++t) {
    pos[t] = roberta ? (id[t] == pad ? pad : pad + ++count) : static_cast<int32_t>(t);
    if (pos[t] >= config.max_positions)
      throw Error("encoder: sequence of " + std::to_string(n) + " tokens is longer than the model's " +
                  std::to_string(config.max_positions) + " positions allow");
  }
}

}  // namespace

Tensor position_ids(const Tensor& input_ids, int64_t batch, int64_t seq, const ModelConfig& config) {
  check_shape(input_ids, {batch * seq}, "encoder", "input_ids");
  Tensor positions = Tensor::empty({batch * seq}, DType::I32);
  for (int64_t b = 0; b < batch; ++b)
    number_positions(input_ids.data<int32_t>() + b * seq, seq, config, positions.data<int32_t>() + b * seq);
  return positions;
}

EncoderBatch pack_sequences(std::span<const std::vector<int32_t>> ids, std::span<const std::vector<int32_t>> types,
                            const ModelConfig& config) {
  if (!types.empty() && types.size() != ids.size()) throw Error("pack_sequences: ids and types differ in count");
  std::vector<int64_t> lengths;
  lengths.reserve(ids.size());
  for (size_t s = 0; s < ids.size(); ++s) {
    if (!types.empty() && types[s].size() != ids[s].size())
      throw Error("pack_sequences: sequence " + std::to_string(s) + " has " + std::to_string(ids[s].size()) +
                  " ids and " + std::to_string(types[s].size()) + " types");
    lengths.push_back(static_cast<int64_t>(ids[s].size()));
  }
  EncoderBatch b;
  b.sequences = PackedSequences::from_lengths(lengths);
  const int64_t n = b.tokens();
  b.input_ids = Tensor::empty({n}, DType::I32);
  b.position_ids = Tensor::empty({n}, DType::I32);
  if (!types.empty() && config.type_vocab > 1) b.token_type_ids = Tensor::empty({n}, DType::I32);
  for (size_t s = 0; s < ids.size(); ++s) {
    const int64_t at = b.sequences.offsets[s];
    std::copy(ids[s].begin(), ids[s].end(), b.input_ids.data<int32_t>() + at);
    number_positions(ids[s].data(), lengths[s], config, b.position_ids.data<int32_t>() + at);
    if (b.token_type_ids.defined()) std::copy(types[s].begin(), types[s].end(), b.token_type_ids.data<int32_t>() + at);
  }
  return b;
}

EncoderBatch pack_padded(const Tensor& input_ids, const Tensor& attention_mask, const Tensor& token_type_ids,
                         int64_t batch, int64_t seq, const ModelConfig& config, std::vector<int32_t>* packed_row) {
  const int64_t cells = batch * seq;
  check_shape(attention_mask, {cells}, "encoder", "attention_mask");
  if (token_type_ids.defined()) check_shape(token_type_ids, {cells}, "encoder", "token_type_ids");
  const Tensor positions = position_ids(input_ids, batch, seq, config);
  const int32_t* mask = attention_mask.data<int32_t>();
  std::vector<int64_t> lengths(static_cast<size_t>(batch), 0);
  std::vector<int32_t> ids, types, pos;
  if (packed_row) packed_row->assign(static_cast<size_t>(cells), -1);
  for (int64_t i = 0; i < cells; ++i) {
    if (mask[i] != 0 && mask[i] != 1)
      throw Error("encoder: attention_mask[" + std::to_string(i / seq) + ", " + std::to_string(i % seq) +
                  "] = " + std::to_string(mask[i]) + ", expected 0 (padding) or 1");
    if (!mask[i]) continue;
    if (packed_row) (*packed_row)[static_cast<size_t>(i)] = static_cast<int32_t>(ids.size());
    ++lengths[static_cast<size_t>(i / seq)];
    ids.push_back(input_ids.data<int32_t>()[i]);
    pos.push_back(positions.data<int32_t>()[i]);
    types.push_back(token_type_ids.defined() ? token_type_ids.data<int32_t>()[i] : 0);
  }
  EncoderBatch b;
  b.sequences = PackedSequences::from_lengths(lengths);
  const auto n = static_cast<int64_t>(ids.size());
  b.input_ids = Tensor::from<int32_t>({n}, ids);
  b.position_ids = Tensor::from<int32_t>({n}, pos);
  if (token_type_ids.defined()) b.token_type_ids = Tensor::from<int32_t>({n}, types);
  return b;
}

void Encoder::embeddings_forward(const EncoderBatch& batch, const DropoutContext& dropout) {
  const int64_t n = batch.tokens();
  check_shape(batch.input_ids, {n}, "encoder", "input_ids");
  ids_.copy_from(batch.input_ids);
  if (batch.token_type_ids.defined()) {
    check_shape(batch.token_type_ids, {n}, "encoder", "token_type_ids");
    types_.copy_from(batch.token_type_ids);
  } else {
    types_.zero();
  }
  if (batch.position_ids.defined()) {
    check_shape(batch.position_ids, {n}, "encoder", "position_ids");
    positions_.copy_from(batch.position_ids);
  } else {
    const Tensor ids = batch.input_ids.to(Device::Cpu);
    Tensor positions = Tensor::empty({n}, DType::I32);
    for (int64_t s = 0; s < seqs_.sequences(); ++s) {
      const int64_t at = seqs_.offsets[static_cast<size_t>(s)];
      number_positions(ids.data<int32_t>() + at, seqs_.length(s), config_, positions.data<int32_t>() + at);
    }
    positions_.copy_from(positions);
  }
  if (dropout.training) {
    const std::vector<int64_t> numbers = seqs_.token_numbers();
    numbers_.copy_from(Tensor::from<int64_t>({n}, numbers));
  }

  embedding_forward(ids_, param(word_), emb_sum_, GradMode::Overwrite);
  embedding_forward(positions_, param(position_), emb_sum_, GradMode::Accumulate);
  embedding_forward(types_, param(token_type_), emb_sum_, GradMode::Accumulate);
  layer_norm_forward(emb_sum_, param(emb_ln_g_), param(emb_ln_b_), config_.layer_norm_eps, emb_out_, emb_mean_,
                     emb_rstd_);
  drop(emb_out_, dropout, kEmbeddingSite, emb_mask_);
}

void Encoder::drop(Tensor& x, const DropoutContext& dropout, uint64_t site, Tensor& mask) {
  dropout_forward(x, hidden_p_, dropout.site_key(site), numbers_, x, mask);
}

const Tensor& Encoder::forward(const EncoderBatch& batch, const DropoutContext& dropout) {
  seqs_ = batch.sequences;
  seqs_.first_number = dropout.training ? dropout.first_row : 0;  // the one numbering of the sequences
  ensure_buffers(batch.tokens(), seqs_.score_elements(config_.heads));
  hidden_p_ = dropout.training ? config_.hidden_dropout : 0.0f;
  attention_p_ = dropout.training ? config_.attention_dropout : 0.0f;
  embeddings_forward(batch, dropout);
  for (size_t l = 0; l < layers_.size(); ++l) layer_forward(l, l == 0 ? emb_out_ : layers_[l - 1].out, dropout);
  return layers_.back().out;
}

void Encoder::layer_forward(size_t l, const Tensor& x, const DropoutContext& dropout) {
  Layer& L = layers_[l];
  const AttentionShape shape{config_.heads, config_.hidden};
  linear_forward(x, param(L.qkv_w), param(L.qkv_b), L.qkv);
  attention_forward(L.qkv, seqs_, shape, attention_p_, dropout.site_key(layer_site(l, 0)), L.ctx, L.probs,
                    L.probs_mask);
  // sum1 = dropout(dense(ctx)) + x, then LayerNorm (post-LN).
  linear_forward(L.ctx, param(L.out_w), param(L.out_b), L.sum1);
  drop(L.sum1, dropout, layer_site(l, 1), L.attn_mask);
  add_layer_norm_forward(L.sum1, x, param(L.ln1_g), param(L.ln1_b), config_.layer_norm_eps, L.sum1, L.h1, L.ln1_mean,
                         L.ln1_rstd);
  // Feed-forward: sum2 = dropout(down(gelu(up(h1)))) + h1, then LayerNorm.
  linear_forward(L.h1, param(L.up_w), param(L.up_b), L.ff_pre);
  gelu_forward(L.ff_pre, L.ff_act);
  linear_forward(L.ff_act, param(L.down_w), param(L.down_b), L.sum2);
  drop(L.sum2, dropout, layer_site(l, 2), L.ff_mask);
  add_layer_norm_forward(L.sum2, L.h1, param(L.ln2_g), param(L.ln2_b), config_.layer_norm_eps, L.sum2, L.out,
                         L.ln2_mean, L.ln2_rstd);
}

void Encoder::layer_backward(size_t l, const Tensor& x, Tensor& dout, Tensor& dx) {
  Layer& L = layers_[l];
  const AttentionShape shape{config_.heads, config_.hidden};
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
  attention_backward(d_ctx_, L.qkv, L.probs, L.probs_mask, seqs_, shape, attention_p_, d_qkv_);
  linear_backward(d_qkv_, x, param(L.qkv_w), dx, grad(L.qkv_w), grad(L.qkv_b), GradMode::Accumulate);
}

void Encoder::backward(Tensor& dhidden) {
  check_shape(dhidden, {tokens_, config_.hidden}, "encoder backward", "dhidden");
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
