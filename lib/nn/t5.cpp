#include "nn/t5.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "core/error.hpp"
#include "nn/ops/activation.hpp"
#include "nn/ops/biased_attention.hpp"
#include "nn/ops/dropout.hpp"
#include "nn/ops/elementwise.hpp"
#include "nn/ops/embedding.hpp"
#include "nn/ops/linear.hpp"
#include "nn/ops/rms_norm.hpp"

namespace kglm::nn {

namespace {

using Init = Parameter::Init;

// Dropout sites: each stack numbers its own from a base (see T5Model::Stack::site), and a pass's
// sites are keyed (seed, stream · kSitesPerStream + site).
constexpr uint64_t kSitesPerStream = 4096;
constexpr uint64_t kSitesPerBlock = 6;  // self probs, self out, cross probs, cross out, ff hidden, ff out

DropoutKey site_key(const DropoutContext& dropout, uint64_t site, int64_t elements) {
  DropoutKey key = dropout.key(0, elements);
  key.stream = dropout.stream * kSitesPerStream + site;
  return key;
}

struct AttentionParams {
  size_t q, k, v, o, norm;
};

struct FeedForwardParams {
  size_t wi0, wi1, wo, norm;  // wi1 only for the gated feed-forward
};

// What an attention sublayer keeps for its backward pass; `in` is the residual stream it read
// (the previous sublayer's `out`), `out` = in + dropout(o(attention(norm(in)))).
struct AttentionSaved {
  Tensor in, normed, rstd, q, k, v, ctx, probs, probs_mask, out_mask, out;
};

struct FeedForwardSaved {
  Tensor in, normed, rstd, pre0, pre1, act0, hidden, hidden_mask, out_mask, out;
};

struct Block {
  AttentionParams self{}, cross{};
  FeedForwardParams ff{};
  AttentionSaved self_saved, cross_saved;
  FeedForwardSaved ff_saved;
};

// A [shape] view of the first elements of a 1-D buffer (the decode step's growing shapes).
Tensor prefix_view(const Tensor& buffer, const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return buffer.rows(0, n).view(shape);
}

}  // namespace

int32_t relative_position_bucket(int64_t relative, bool bidirectional, int64_t buckets, int64_t max_distance) {
  int64_t bucket = 0;
  if (bidirectional) {
    buckets /= 2;
    if (relative > 0) bucket += buckets;
    relative = relative < 0 ? -relative : relative;
  } else {
    relative = relative < 0 ? -relative : 0;  // only keys before the query
  }
  const int64_t max_exact = buckets / 2;
  if (relative < max_exact) return static_cast<int32_t>(bucket + relative);
  // In float, as Hugging Face computes it (the truncation decides the bucket).
  const float scaled =
      std::log(static_cast<float>(relative) / static_cast<float>(max_exact)) /
      static_cast<float>(std::log(static_cast<double>(max_distance) / static_cast<double>(max_exact))) *
      static_cast<float>(buckets - max_exact);
  const int64_t large = std::min<int64_t>(max_exact + static_cast<int64_t>(scaled), buckets - 1);
  return static_cast<int32_t>(bucket + large);
}

Tensor shift_right(const Tensor& labels, int64_t batch, int64_t target_len, const T5Config& config) {
  check_shape(labels, {batch * target_len}, "shift_right", "labels");
  Tensor out = Tensor::empty({batch * target_len}, DType::I32);
  const int32_t* l = labels.data<int32_t>();
  int32_t* o = out.data<int32_t>();
  for (int64_t b = 0; b < batch; ++b) {
    o[b * target_len] = static_cast<int32_t>(config.decoder_start_token_id);
    for (int64_t t = 1; t < target_len; ++t) {
      const int32_t prev = l[b * target_len + t - 1];
      o[b * target_len + t] = prev == kIgnoreIndex ? static_cast<int32_t>(config.pad_token_id) : prev;
    }
  }
  return out;
}

// One stack: the encoder (bidirectional self-attention) or the decoder (causal self-attention and
// cross-attention over the encoder output).
class T5Model::Stack {
 public:
  Stack(const T5Config& config, ParameterStore& params, bool decoder, size_t shared)
      : config_(config), params_(params), decoder_(decoder), shared_(shared), workspace_(params.device()) {
    const std::string stack = decoder ? "decoder." : "encoder.";
    const int64_t d = config.d_model, inner = config.inner(), f = config.d_ff;
    const double factor = config.initializer_factor;
    auto weight = [&](const std::string& name, Shape shape, double std) {
      const size_t i = params.add(name, std::move(shape), Init::Normal, true);
      params[i].init_std = factor * std;
      return i;
    };
    auto norm = [&](const std::string& name) { return params.add(name, {d}, Init::Ones, false); };
    auto attention = [&](const std::string& n) {
      return AttentionParams{weight(n + "q.weight", {inner, d}, 1 / std::sqrt(double(d * config.d_kv))),
                             weight(n + "k.weight", {inner, d}, 1 / std::sqrt(double(d))),
                             weight(n + "v.weight", {inner, d}, 1 / std::sqrt(double(d))),
                             weight(n + "o.weight", {d, inner}, 1 / std::sqrt(double(inner))), 0};
    };
    const int64_t count = decoder ? config.decoder_layers : config.layers;
    for (int64_t l = 0; l < count; ++l) {
      const std::string b = stack + "block." + std::to_string(l) + ".layer.";
      Block block;
      block.self = attention(b + "0.SelfAttention.");
      if (l == 0)
        table_ = weight(b + "0.SelfAttention.relative_attention_bias.weight", {config.buckets, config.heads},
                        1 / std::sqrt(double(d)));
      block.self.norm = norm(b + "0.layer_norm.weight");
      const std::string ff = b + (decoder ? "2." : "1.");
      if (decoder) {
        block.cross = attention(b + "1.EncDecAttention.");
        block.cross.norm = norm(b + "1.layer_norm.weight");
      }
      const double wi_std = 1 / std::sqrt(double(d));
      if (config.feed_forward == FeedForward::GatedGelu) {
        block.ff.wi0 = weight(ff + "DenseReluDense.wi_0.weight", {f, d}, wi_std);
        block.ff.wi1 = weight(ff + "DenseReluDense.wi_1.weight", {f, d}, wi_std);
      } else {
        block.ff.wi0 = weight(ff + "DenseReluDense.wi.weight", {f, d}, wi_std);
      }
      block.ff.wo = weight(ff + "DenseReluDense.wo.weight", {d, f}, 1 / std::sqrt(double(f)));
      block.ff.norm = norm(ff + "layer_norm.weight");
      blocks_.push_back(std::move(block));
    }
    final_norm_ = norm(stack + "final_layer_norm.weight");
  }

  // The stack over ids I32 [B·T]. key_mask I32 [B, T] (encoder) or undefined (decoder: causal);
  // the decoder attends to `encoder` [B·S, d_model] with encoder_mask I32 [B, S].
  const Tensor& forward(const Tensor& ids, int64_t batch, int64_t len, const Tensor& key_mask, const Tensor& encoder,
                        const Tensor& encoder_mask, int64_t source_len, const DropoutContext& dropout,
                        uint64_t first_site) {
    ensure_buffers(batch, len, source_len);
    p_ = dropout.training ? config_.dropout : 0.0f;
    ids_.copy_from(ids);
    if (key_mask.defined()) key_mask_.copy_from(key_mask);
    embedding_forward(ids_, param(shared_), emb_);
    dropout_forward(emb_, p_, site_key(dropout, first_site, emb_.numel()), emb_, emb_mask_);
    relative_bias_forward(buckets_, param(table_), bias_);
    const Tensor* x = &emb_;
    for (size_t l = 0; l < blocks_.size(); ++l) {
      Block& b = blocks_[l];
      const uint64_t site = first_site + 1 + kSitesPerBlock * l;
      attention_forward(b.self, b.self_saved, *x, b.self_saved.normed, self_shape(), key_mask_, bias_, dropout, site);
      x = &b.self_saved.out;
      if (decoder_) {
        attention_forward(b.cross, b.cross_saved, *x, encoder, cross_shape(source_len), encoder_mask, Tensor(), dropout,
                          site + 2);
        x = &b.cross_saved.out;
      }
      feed_forward(b.ff, b.ff_saved, *x, dropout, site + 4);
      x = &b.ff_saved.out;
    }
    last_ = *x;
    rms_norm_forward(last_, param(final_norm_), config_.layer_norm_eps, out_, out_rstd_);
    dropout_forward(out_, p_, site_key(dropout, first_site + 1 + kSitesPerBlock * blocks_.size(), out_.numel()), out_,
                    out_mask_);
    return out_;
  }

  // dout [B·T, d_model]: the gradient of the output (clobbered). The decoder adds the gradient of
  // the encoder output to d_encoder.
  void backward(Tensor& dout, const Tensor& encoder, Tensor& d_encoder) {
    dropout_backward(dout, out_mask_, p_, dout);
    rms_norm_backward(dout, last_, param(final_norm_), out_rstd_, dx_, grad(final_norm_));
    for (size_t l = blocks_.size(); l-- > 0;) {
      Block& b = blocks_[l];
      feed_forward_backward(b.ff, b.ff_saved);
      if (decoder_) attention_backward(b.cross, b.cross_saved, encoder, d_encoder, cross_shape(source_len_), false);
      attention_backward(b.self, b.self_saved, b.self_saved.normed, d_normed_, self_shape(), true);
    }
    dropout_backward(dx_, emb_mask_, p_, dx_);
    embedding_backward(ids_, dx_, grad(shared_));
  }

  const Tensor& output() const { return out_; }
  // The encoder's key mask I32 [B, T] as its last forward pass copied it (on the model's device).
  const Tensor& key_mask() const { return key_mask_; }

  // --- incremental decoding (the decoder stack) ---------------------------------------------------
  struct Cache {
    std::vector<Tensor> self_k, self_v, cross_k, cross_v;  // per block: [B, capacity, I], [B, S, I]
    Tensor encoder_mask;                                   // I32 [B, S]
    int64_t batch = 0, capacity = 0, source_len = 0, steps = 0;
    // Step buffers.
    Tensor x, normed, rstd, q, k, v, ctx, probs, bias, logits_in;
    FeedForwardSaved ff;
  };

  void start(Cache& c, const Tensor& encoder, const Tensor& encoder_mask, int64_t batch, int64_t source_len,
             int64_t capacity) {
    const int64_t inner = config_.inner(), s = batch * source_len;
    c = Cache{};
    p_ = 0;  // decoding never drops out
    c.batch = batch;
    c.capacity = capacity;
    c.source_len = source_len;
    const Device dev = params_.device();
    const DType a = params_.compute_dtype();
    c.encoder_mask = encoder_mask.view({batch, source_len}).clone();
    for (const Block& b : blocks_) {
      c.self_k.push_back(Tensor::zeros({batch, capacity, inner}, a, dev));
      c.self_v.push_back(Tensor::zeros({batch, capacity, inner}, a, dev));
      Tensor k = Tensor::empty({s, inner}, a, dev), v = Tensor::empty({s, inner}, a, dev);
      linear_forward(encoder, param(b.cross.k), Tensor(), k);
      linear_forward(encoder, param(b.cross.v), Tensor(), v);
      c.cross_k.push_back(k.view({batch, source_len, inner}));
      c.cross_v.push_back(v.view({batch, source_len, inner}));
    }
    allocate_step_buffers(c);
  }

  // One decoder position for every sequence: returns the final-normed output [B, d_model].
  Tensor& step(Cache& c, const Tensor& tokens) {
    const int64_t t = c.steps, B = c.batch, inner = config_.inner();
    if (t >= c.capacity)
      throw Error("T5 decoding: more than the " + std::to_string(c.capacity) + " steps the cache was made for");
    embedding_forward(tokens, param(shared_), c.x);
    // The bias of query position t against keys 0 … t.
    Tensor buckets = Tensor::empty({1, t + 1}, DType::I32);
    for (int64_t j = 0; j <= t; ++j)
      buckets.data<int32_t>()[j] = relative_position_bucket(j - t, false, config_.buckets, config_.max_distance);
    Tensor bias = prefix_view(c.bias, {config_.heads, 1, t + 1});
    relative_bias_forward(buckets.to(params_.device()), param(table_), bias);
    const BiasedAttentionShape self{B, 1, t + 1, config_.heads, config_.d_kv, c.capacity, true, t};
    const BiasedAttentionShape cross{B, 1, c.source_len, config_.heads, config_.d_kv};
    Tensor none;
    for (size_t l = 0; l < blocks_.size(); ++l) {
      const Block& b = blocks_[l];
      // Self-attention: this position's key and value join the cache.
      rms_norm_forward(c.x, param(b.self.norm), config_.layer_norm_eps, c.normed, c.rstd);
      linear_forward(c.normed, param(b.self.q), none, c.q);
      linear_forward(c.normed, param(b.self.k), none, c.k);
      linear_forward(c.normed, param(b.self.v), none, c.v);
      Tensor k_rows = c.self_k[l].view({B * c.capacity, inner}), v_rows = c.self_v[l].view({B * c.capacity, inner});
      copy_rows_strided(c.k, k_rows, t, c.capacity);
      copy_rows_strided(c.v, v_rows, t, c.capacity);
      attend(c, self, c.self_k[l], c.self_v[l], none, bias, b.self.o);
      // Cross-attention over the cached encoder keys and values.
      rms_norm_forward(c.x, param(b.cross.norm), config_.layer_norm_eps, c.normed, c.rstd);
      linear_forward(c.normed, param(b.cross.q), none, c.q);
      attend(c, cross, c.cross_k[l], c.cross_v[l], c.encoder_mask, none, b.cross.o);
      feed_forward(b.ff, c.ff, c.x, DropoutContext{}, 0);
      c.x.copy_from(c.ff.out);
    }
    rms_norm_forward(c.x, param(final_norm_), config_.layer_norm_eps, c.logits_in, c.rstd);
    ++c.steps;
    return c.logits_in;
  }

  // Sequence i of the new cache continues sequence rows[i] of the old one; the batch becomes
  // rows.size() (beam search widens it to the beams, finished sequences leave it).
  void reorder(Cache& c, const std::vector<int32_t>& rows) {
    const auto n = static_cast<int64_t>(rows.size());
    if (n == 0) throw Error("T5 decoding: reorder_cache with no rows");
    for (int32_t r : rows)
      if (r < 0 || r >= c.batch)
        throw Error("T5 decoding: reorder_cache row " + std::to_string(r) + " is outside [0, " +
                    std::to_string(c.batch) + ")");
    const Tensor index = Tensor::from<int32_t>({n}, rows).to(params_.device());
    auto gather = [&](Tensor& t) {
      const int64_t width = t.numel() / c.batch;
      Tensor gathered = Tensor::empty({n, width}, t.dtype(), t.device());
      gather_rows(t.view({c.batch, width}), index, gathered);
      Shape shape = t.shape();
      shape[0] = n;
      t = gathered.view(shape);
    };
    for (size_t l = 0; l < blocks_.size(); ++l)
      for (Tensor* t : {&c.self_k[l], &c.self_v[l], &c.cross_k[l], &c.cross_v[l]}) gather(*t);
    const Tensor mask = c.encoder_mask.to(Device::Cpu);
    Tensor reordered = Tensor::empty({n, c.source_len}, DType::I32);
    for (int64_t i = 0; i < n; ++i)
      reordered.rows(i, i + 1).copy_from(mask.rows(rows[static_cast<size_t>(i)], rows[static_cast<size_t>(i)] + 1));
    c.encoder_mask = reordered.to(params_.device());
    c.batch = n;
    allocate_step_buffers(c);
  }

 private:
  BiasedAttentionShape self_shape() const {
    BiasedAttentionShape s{batch_, len_, len_, config_.heads, config_.d_kv};
    s.causal = decoder_;
    return s;
  }
  BiasedAttentionShape cross_shape(int64_t source_len) const {
    return BiasedAttentionShape{batch_, len_, source_len, config_.heads, config_.d_kv};
  }

  void ensure_buffers(int64_t batch, int64_t len, int64_t source_len) {
    if (batch == batch_ && len == len_ && source_len == source_len_) return;
    batch_ = batch;
    len_ = len;
    source_len_ = source_len;
    workspace_.begin();
    const int64_t n = batch * len, m = batch * source_len, d = config_.d_model, inner = config_.inner(),
                  f = config_.d_ff, a = config_.heads;
    const DType dt = params_.compute_dtype();
    auto buf = [&](Shape shape, DType type) { return workspace_.buffer(std::move(shape), type); };
    ids_ = buf({n}, DType::I32);
    key_mask_ = decoder_ ? Tensor() : buf({batch, len}, DType::I32);
    emb_ = buf({n, d}, dt);
    emb_mask_ = buf({n, d}, DType::U8);
    bias_ = buf({a, len, len}, dt);
    // The bucket of every (query, key) pair, on the host, then to the device.
    Tensor host = Tensor::empty({len, len}, DType::I32);
    for (int64_t i = 0; i < len; ++i)
      for (int64_t j = 0; j < len; ++j)
        host.data<int32_t>()[i * len + j] =
            relative_position_bucket(j - i, !decoder_, config_.buckets, config_.max_distance);
    buckets_ = buf({len, len}, DType::I32);
    buckets_.copy_from(host);
    auto attention_buffers = [&](AttentionSaved& s, int64_t keys) {
      s.normed = buf({n, d}, dt);
      s.rstd = buf({n}, DType::F32);
      s.q = buf({n, inner}, dt);
      s.k = buf({batch * keys, inner}, dt);
      s.v = buf({batch * keys, inner}, dt);
      s.ctx = buf({n, inner}, dt);
      s.probs = buf({batch, a, len, keys}, dt);
      s.probs_mask = buf({batch, a, len, keys}, DType::U8);
      s.out_mask = buf({n, d}, DType::U8);
      s.out = buf({n, d}, dt);
    };
    for (Block& b : blocks_) {
      attention_buffers(b.self_saved, len);
      if (decoder_) attention_buffers(b.cross_saved, source_len);
      FeedForwardSaved& s = b.ff_saved;
      s.normed = buf({n, d}, dt);
      s.rstd = buf({n}, DType::F32);
      s.pre0 = buf({n, f}, dt);
      if (config_.feed_forward == FeedForward::GatedGelu) {
        s.act0 = buf({n, f}, dt);
        s.pre1 = buf({n, f}, dt);
      }
      s.hidden = buf({n, f}, dt);
      s.hidden_mask = buf({n, f}, DType::U8);
      s.out_mask = buf({n, d}, DType::U8);
      s.out = buf({n, d}, dt);
    }
    out_ = buf({n, d}, dt);
    out_rstd_ = buf({n}, DType::F32);
    out_mask_ = buf({n, d}, DType::U8);
    const int64_t rows = std::max(n, m);
    dx_ = buf({n, d}, dt);
    d_out_ = buf({n, d}, dt);
    d_normed_ = buf({n, d}, dt);
    d_q_ = buf({n, inner}, dt);
    d_ctx_ = buf({n, inner}, dt);
    d_k_ = buf({rows * inner}, dt);
    d_v_ = buf({rows * inner}, dt);
    d_hidden_ = buf({n, f}, dt);
    d_act_ = buf({n, f}, dt);
    d_scores_ = buf({batch * a * len * std::max(len, source_len)}, dt);
  }

  // s.out = x + dropout(o(attention(q = norm(x)·Wq, k = source·Wk, v = source·Wv))); source is
  // s.normed itself for self-attention.
  void attention_forward(const AttentionParams& p, AttentionSaved& s, const Tensor& x, const Tensor& source,
                         const BiasedAttentionShape& shape, const Tensor& key_mask, const Tensor& bias,
                         const DropoutContext& dropout, uint64_t site) {
    Tensor none;
    s.in = x;
    rms_norm_forward(x, param(p.norm), config_.layer_norm_eps, s.normed, s.rstd);
    linear_forward(s.normed, param(p.q), none, s.q);
    linear_forward(source, param(p.k), none, s.k);
    linear_forward(source, param(p.v), none, s.v);
    const int64_t inner = config_.inner();
    Tensor ctx = s.ctx.view({shape.batch, shape.queries, inner});
    biased_attention_forward(s.q.view({shape.batch, shape.queries, inner}), s.k.view({shape.batch, shape.keys, inner}),
                             s.v.view({shape.batch, shape.keys, inner}), key_mask, bias, shape, p_,
                             site_key(dropout, site, s.probs.numel()), ctx, s.probs, s.probs_mask);
    linear_forward(s.ctx, param(p.o), none, s.out);
    dropout_forward(s.out, p_, site_key(dropout, site + 1, s.out.numel()), s.out, s.out_mask);
    add(s.out, x, s.out);
  }

  // dx_ holds the gradient of s.out; afterwards, that of s.in. `source` and d_source: the keys'
  // and values' input and its gradient (self: s.normed and d_normed_, which the query adds to).
  void attention_backward(const AttentionParams& p, AttentionSaved& s, const Tensor& source, Tensor& d_source,
                          const BiasedAttentionShape& shape, bool self) {
    Tensor none;
    const int64_t inner = config_.inner(), keys = shape.batch * shape.keys;
    dropout_backward(dx_, s.out_mask, p_, d_out_);
    linear_backward(d_out_, s.ctx, param(p.o), d_ctx_, grad(p.o), none);
    Tensor dk = prefix_view(d_k_, {keys, inner}), dv = prefix_view(d_v_, {keys, inner});
    Tensor dq = d_q_.view({shape.batch, shape.queries, inner});
    Tensor dk3 = dk.view({shape.batch, shape.keys, inner}), dv3 = dv.view({shape.batch, shape.keys, inner});
    Tensor dscores = self ? prefix_view(d_scores_, s.probs.shape()) : Tensor();
    biased_attention_backward(d_ctx_.view({shape.batch, shape.queries, inner}),
                              s.q.view({shape.batch, shape.queries, inner}), s.k.view({shape.batch, shape.keys, inner}),
                              s.v.view({shape.batch, shape.keys, inner}), s.probs, s.probs_mask, shape, p_, dq, dk3,
                              dv3, dscores);
    if (self) relative_bias_backward(dscores, buckets_, grad(table_));
    // The query's input gradient first (overwrite), then the keys' and values' (added).
    linear_backward(d_q_, s.normed, param(p.q), d_normed_, grad(p.q), none);
    linear_backward(dk, source, param(p.k), d_source, grad(p.k), none, GradMode::Accumulate);
    linear_backward(dv, source, param(p.v), d_source, grad(p.v), none, GradMode::Accumulate);
    rms_norm_backward(d_normed_, s.in, param(p.norm), s.rstd, dx_, grad(p.norm), GradMode::Accumulate);
  }

  // s.out = x + dropout(wo(dropout(act(norm(x)))))), act = relu(wi·) or gelu_tanh(wi_0·) ⊙ wi_1·.
  void feed_forward(const FeedForwardParams& p, FeedForwardSaved& s, const Tensor& x, const DropoutContext& dropout,
                    uint64_t site) {
    Tensor none;
    s.in = x;
    rms_norm_forward(x, param(p.norm), config_.layer_norm_eps, s.normed, s.rstd);
    linear_forward(s.normed, param(p.wi0), none, s.pre0);
    if (config_.feed_forward == FeedForward::GatedGelu) {
      gelu_tanh_forward(s.pre0, s.act0);
      linear_forward(s.normed, param(p.wi1), none, s.pre1);
      multiply(s.act0, s.pre1, s.hidden);
    } else {
      relu_forward(s.pre0, s.hidden);
    }
    const bool train = p_ > 0;
    dropout_forward(s.hidden, p_, site_key(dropout, site, s.hidden.numel()), s.hidden, train ? s.hidden_mask : none);
    linear_forward(s.hidden, param(p.wo), none, s.out);
    dropout_forward(s.out, p_, site_key(dropout, site + 1, s.out.numel()), s.out, train ? s.out_mask : none);
    add(s.out, x, s.out);
  }

  void feed_forward_backward(const FeedForwardParams& p, FeedForwardSaved& s) {
    Tensor none;
    dropout_backward(dx_, s.out_mask, p_, d_out_);
    linear_backward(d_out_, s.hidden, param(p.wo), d_hidden_, grad(p.wo), none);
    dropout_backward(d_hidden_, s.hidden_mask, p_, d_hidden_);
    if (config_.feed_forward == FeedForward::GatedGelu) {
      multiply(d_hidden_, s.pre1, d_act_);  // through gelu(pre0) ⊙ pre1
      gelu_tanh_backward(d_act_, s.pre0, d_act_);
      multiply(d_hidden_, s.act0, d_hidden_);
      linear_backward(d_act_, s.normed, param(p.wi0), d_normed_, grad(p.wi0), none);
      linear_backward(d_hidden_, s.normed, param(p.wi1), d_normed_, grad(p.wi1), none, GradMode::Accumulate);
    } else {
      relu_backward(d_hidden_, s.hidden, d_hidden_);  // hidden > 0 exactly where relu passed and dropout kept
      linear_backward(d_hidden_, s.normed, param(p.wi0), d_normed_, grad(p.wi0), none);
    }
    rms_norm_backward(d_normed_, s.in, param(p.norm), s.rstd, dx_, grad(p.norm), GradMode::Accumulate);
  }

  // A decode step's attention: c.ctx from c.q against k and v, then c.x += o(c.ctx).
  void attend(Cache& c, const BiasedAttentionShape& shape, const Tensor& k, const Tensor& v, const Tensor& key_mask,
              const Tensor& bias, size_t o) {
    const int64_t inner = config_.inner();
    Tensor ctx = c.ctx.view({c.batch, 1, inner}), none;
    Tensor probs = prefix_view(c.probs, {c.batch, config_.heads, 1, shape.keys});
    biased_attention_forward(c.q.view({c.batch, 1, inner}), k, v, key_mask, bias, shape, 0, {}, ctx, probs, none);
    linear_forward(c.ctx, param(o), none, c.normed);
    add(c.x, c.normed, c.x);
  }

  // A decode step's buffers for c.batch sequences.
  void allocate_step_buffers(Cache& c) const {
    const int64_t batch = c.batch, inner = config_.inner(), d = config_.d_model, f = config_.d_ff;
    const Device dev = params_.device();
    const DType a = params_.compute_dtype();
    c.x = Tensor::empty({batch, d}, a, dev);
    c.normed = Tensor::empty({batch, d}, a, dev);
    c.rstd = Tensor::empty({batch}, DType::F32, dev);
    c.q = Tensor::empty({batch, inner}, a, dev);
    c.k = Tensor::empty({batch, inner}, a, dev);
    c.v = Tensor::empty({batch, inner}, a, dev);
    c.ctx = Tensor::empty({batch, inner}, a, dev);
    c.probs = Tensor::empty({batch * config_.heads * std::max(c.capacity, c.source_len)}, a, dev);
    c.bias = Tensor::empty({config_.heads * c.capacity}, a, dev);
    c.logits_in = Tensor::empty({batch, d}, a, dev);
    c.ff.normed = Tensor::empty({batch, d}, a, dev);
    c.ff.rstd = Tensor::empty({batch}, DType::F32, dev);
    c.ff.pre0 = Tensor::empty({batch, f}, a, dev);
    c.ff.act0 = Tensor::empty({batch, f}, a, dev);
    c.ff.pre1 = Tensor::empty({batch, f}, a, dev);
    c.ff.hidden = Tensor::empty({batch, f}, a, dev);
    c.ff.out = Tensor::empty({batch, d}, a, dev);
  }

  Tensor& param(size_t i) { return params_[i].compute; }
  Tensor& grad(size_t i) { return params_[i].grad; }

  const T5Config& config_;
  ParameterStore& params_;
  bool decoder_;
  size_t shared_, table_ = 0, final_norm_ = 0;
  std::vector<Block> blocks_;
  Workspace workspace_;
  int64_t batch_ = 0, len_ = 0, source_len_ = 0;
  float p_ = 0;
  Tensor ids_, key_mask_, emb_, emb_mask_, buckets_, bias_, last_, out_, out_rstd_, out_mask_;
  Tensor dx_, d_out_, d_normed_, d_q_, d_ctx_, d_k_, d_v_, d_hidden_, d_act_, d_scores_;
};

struct T5Model::DecodeState {
  Stack::Cache cache;
  Tensor logits;
};

T5Model::T5Model(const T5Config& config, ParameterStore& params)
    : config_(config), params_(params), workspace_(params.device()) {
  config_.validate();
  shared_ = params.add("shared.weight", {config.vocab_size, config.d_model}, Init::Normal, true);
  params[shared_].init_std = config.initializer_factor;
  encoder_ = std::make_unique<Stack>(config_, params, false, shared_);
  decoder_ = std::make_unique<Stack>(config_, params, true, shared_);
  lm_head_ = shared_;
  if (!config.tie_embeddings) {
    lm_head_ = params.add("lm_head.weight", {config.vocab_size, config.d_model}, Init::Normal, true);
    params[lm_head_].init_std = config.initializer_factor;
  }
}

T5Model::~T5Model() = default;

void T5Model::initialize(uint64_t seed) {
  params_.initialize(seed, config_.initializer_factor);
  params_.refresh_compute();
}

const Tensor& T5Model::encoder_output() const { return encoder_->output(); }
const Tensor& T5Model::decoder_output() const { return decoder_->output(); }

CrossEntropyResult T5Model::forward(const Seq2SeqBatch& batch, const DropoutContext& dropout, double grad_scale) {
  const int64_t B = batch.batch, S = batch.source_len, T = batch.target_len, d = config_.d_model;
  check_shape(batch.input_ids, {B * S}, "T5", "input_ids");
  check_shape(batch.attention_mask, {B * S}, "T5", "attention_mask");
  check_shape(batch.decoder_input_ids, {B * T}, "T5", "decoder_input_ids");
  check_shape(batch.labels, {B * T}, "T5", "labels");
  if (rows_ != B * T || source_rows_ != B * S) {
    rows_ = B * T;
    source_rows_ = B * S;
    workspace_.begin();
    const DType a = params_.compute_dtype();
    labels_ = workspace_.buffer({rows_}, DType::I32);
    head_in_ = workspace_.buffer({rows_, d}, a);
    logits_ = workspace_.buffer({rows_, config_.vocab_size}, a);
    d_decoder_ = workspace_.buffer({rows_, d}, a);
    d_encoder_ = workspace_.buffer({source_rows_, d}, a);
  }
  const Tensor mask = batch.attention_mask.view({B, S});
  const Tensor& encoded = encoder_->forward(batch.input_ids, B, S, mask, Tensor(), Tensor(), 0, dropout, 0);
  const uint64_t decoder_sites = 2 + kSitesPerBlock * static_cast<uint64_t>(config_.layers);
  const Tensor& decoded = decoder_->forward(batch.decoder_input_ids, B, T, Tensor(), encoded, encoder_->key_mask(), S,
                                            dropout, decoder_sites);
  head_in_.copy_from(decoded);
  if (config_.tie_embeddings) scale(head_in_, 1 / std::sqrt(static_cast<double>(d)));
  linear_forward(head_in_, params_[lm_head_].compute, Tensor(), logits_);
  labels_.copy_from(batch.labels);
  Tensor none;
  return cross_entropy(logits_, labels_, grad_scale > 0 ? logits_ : none, grad_scale);
}

void T5Model::backward() {
  Tensor none;
  linear_backward(logits_, head_in_, params_[lm_head_].compute, d_decoder_, params_[lm_head_].grad, none);
  if (config_.tie_embeddings) scale(d_decoder_, 1 / std::sqrt(static_cast<double>(config_.d_model)));
  d_encoder_.zero();
  decoder_->backward(d_decoder_, encoder_->output(), d_encoder_);
  encoder_->backward(d_encoder_, none, none);
}

void T5Model::start_decoding(const Tensor& input_ids, const Tensor& attention_mask, int64_t batch, int64_t source_len,
                             int64_t max_steps) {
  if (max_steps <= 0) throw Error("T5 decoding: max_steps must be positive");
  const Tensor mask = attention_mask.view({batch, source_len});
  const Tensor& encoded = encoder_->forward(input_ids, batch, source_len, mask, Tensor(), Tensor(), 0, {}, 0);
  decode_ = std::make_unique<DecodeState>();
  decoder_->start(decode_->cache, encoded, encoder_->key_mask(), batch, source_len, max_steps);
  decode_->logits = Tensor::empty({batch, config_.vocab_size}, params_.compute_dtype(), params_.device());
}

const Tensor& T5Model::decode_step(const Tensor& tokens) {
  if (!decode_) throw Error("T5 decoding: decode_step before start_decoding");
  check_shape(tokens, {decode_->cache.batch}, "T5 decode_step", "tokens");
  Tensor& out = decoder_->step(decode_->cache, tokens.to(params_.device()));
  if (decode_->logits.dim(0) != decode_->cache.batch)
    decode_->logits =
        Tensor::empty({decode_->cache.batch, config_.vocab_size}, params_.compute_dtype(), params_.device());
  if (config_.tie_embeddings) scale(out, 1 / std::sqrt(static_cast<double>(config_.d_model)));
  linear_forward(out, params_[lm_head_].compute, Tensor(), decode_->logits);
  return decode_->logits;
}

void T5Model::reorder_cache(const std::vector<int32_t>& rows) {
  if (!decode_) throw Error("T5 decoding: reorder_cache before start_decoding");
  decoder_->reorder(decode_->cache, rows);
}

int64_t T5Model::decoded_steps() const { return decode_ ? decode_->cache.steps : 0; }

int64_t T5Model::decoding_batch() const { return decode_ ? decode_->cache.batch : 0; }

}  // namespace kglm::nn
