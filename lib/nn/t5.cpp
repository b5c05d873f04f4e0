#include "nn/t5.hpp"

#include <cmath>
#include <limits>
#include <numeric>
#include <optional>
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

// Dropout sites: each stack numbers its own from a base, and a pass's sites are keyed (seed,
// stream · kSitesPerStream + site). Every site is row-numbered: a token's draws depend on its
// sequence's number and its position (token_number, attention_dropout_number), not on the batch.
constexpr uint64_t kSitesPerStream = 4096;
constexpr uint64_t kSitesPerBlock = 6;  // self probs, self out, cross probs, cross out, ff hidden, ff out

DropoutKey site_key(const DropoutContext& dropout, uint64_t site) {
  return {dropout.seed, dropout.stream * kSitesPerStream + site, 0};
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

Tensor shift_right(const Tensor& labels, const PackedSequences& targets, const T5Config& config) {
  check_shape(labels, {targets.tokens()}, "shift_right", "labels");
  Tensor out = Tensor::empty({targets.tokens()}, DType::I32);
  const int32_t* l = labels.data<int32_t>();
  int32_t* o = out.data<int32_t>();
  for (int64_t s = 0; s < targets.sequences(); ++s) {
    const int64_t at = targets.offsets[static_cast<size_t>(s)], n = targets.length(s);
    if (n == 0) continue;
    o[at] = static_cast<int32_t>(config.decoder_start_token_id);
    for (int64_t t = 1; t < n; ++t) {
      const int32_t prev = l[at + t - 1];
      o[at + t] = prev == kIgnoreIndex ? static_cast<int32_t>(config.pad_token_id) : prev;
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

  // The stack over the packed ids I32 [seqs.tokens()]; the decoder (causal self-attention) also
  // attends to `encoder` [sources.tokens(), d_model], target s to source s's rows.
  const Tensor& forward(const Tensor& ids, const PackedSequences& seqs, const Tensor& encoder,
                        const PackedSequences* sources, const DropoutContext& dropout, uint64_t first_site) {
    seqs_ = seqs;
    seqs_.first_number = dropout.training ? dropout.first_row : 0;  // the one numbering of the sequences
    if (decoder_) {
      sources_ = *sources;
      sources_.first_number = seqs_.first_number;
    }
    self_pairs_.emplace(seqs_, seqs_);
    if (decoder_) cross_pairs_.emplace(seqs_, sources_);
    p_ = dropout.training ? config_.dropout : 0.0f;
    ensure_buffers();
    ids_.copy_from(ids);
    if (p_ > 0) numbers_.copy_from(Tensor::from<int64_t>({seqs_.tokens()}, seqs_.token_numbers()));
    embedding_forward(ids_, param(shared_), emb_);
    dropout_forward(emb_, p_, site_key(dropout, first_site), numbers_, emb_, emb_mask_);
    relative_bias_forward(buckets_, param(table_), bias_);
    const Tensor* x = &emb_;
    for (size_t l = 0; l < blocks_.size(); ++l) {
      Block& b = blocks_[l];
      const uint64_t site = first_site + 1 + kSitesPerBlock * l;
      attention_forward(b.self, b.self_saved, *x, b.self_saved.normed, *self_pairs_, self_shape(), bias_, dropout,
                        site);
      x = &b.self_saved.out;
      if (decoder_) {
        attention_forward(b.cross, b.cross_saved, *x, encoder, *cross_pairs_, cross_shape(), Tensor(), dropout,
                          site + 2);
        x = &b.cross_saved.out;
      }
      feed_forward(b.ff, b.ff_saved, *x, numbers_, dropout, site + 4);
      x = &b.ff_saved.out;
    }
    last_ = *x;
    rms_norm_forward(last_, param(final_norm_), config_.layer_norm_eps, out_, out_rstd_);
    dropout_forward(out_, p_, site_key(dropout, first_site + 1 + kSitesPerBlock * blocks_.size()), numbers_, out_,
                    out_mask_);
    return out_;
  }

  // dout [tokens, d_model]: the gradient of the output (clobbered). The decoder adds the gradient
  // of the encoder output to d_encoder.
  void backward(Tensor& dout, const Tensor& encoder, Tensor& d_encoder) {
    dropout_backward(dout, out_mask_, p_, dout);
    rms_norm_backward(dout, last_, param(final_norm_), out_rstd_, dx_, grad(final_norm_));
    for (size_t l = blocks_.size(); l-- > 0;) {
      Block& b = blocks_[l];
      feed_forward_backward(b.ff, b.ff_saved);
      if (decoder_) attention_backward(b.cross, b.cross_saved, encoder, d_encoder, *cross_pairs_, cross_shape(), false);
      attention_backward(b.self, b.self_saved, b.self_saved.normed, d_normed_, *self_pairs_, self_shape(), true);
    }
    dropout_backward(dx_, emb_mask_, p_, dx_);
    embedding_backward(ids_, dx_, grad(shared_));
  }

  const Tensor& output() const { return out_; }

  // --- incremental decoding (the decoder stack) ---------------------------------------------------
  struct Cache {
    // Per block: the self-attention's keys and values [B·capacity, I] (sequence s's at rows
    // s·capacity …), the cross-attention's [sources.tokens(), I] (packed as the sources). The
    // capacity starts small and doubles up to max_steps as decoding goes on; reorder_cache (at every
    // step of a beam search) moves the steps so far and leaves room for one more.
    std::vector<Tensor> self_k, self_v, cross_k, cross_v;
    PackedSequences sources;
    // The encoded source each sequence reads (beam search's sequences of one source read the same).
    std::vector<int32_t> source_of;
    int64_t batch = 0, capacity = 0, max_steps = 0, steps = 0;
    // Step buffers.
    Tensor x, normed, rstd, q, k, v, ctx, probs, bias, logits_in;
    FeedForwardSaved ff;
  };

  void start(Cache& c, const Tensor& encoder, const PackedSequences& sources, int64_t max_steps,
             int64_t first_capacity) {
    const int64_t inner = config_.inner(), batch = sources.sequences();
    c = Cache{};
    p_ = 0;  // decoding never drops out
    c.batch = batch;
    c.max_steps = max_steps;
    c.capacity = std::min(max_steps, first_capacity);
    c.sources = sources;
    c.sources.first_number = 0;
    c.source_of.resize(static_cast<size_t>(batch));
    std::iota(c.source_of.begin(), c.source_of.end(), 0);
    const Device dev = params_.device();
    const DType a = params_.compute_dtype();
    for (const Block& b : blocks_) {
      c.self_k.push_back(Tensor::zeros({batch * c.capacity, inner}, a, dev));
      c.self_v.push_back(Tensor::zeros({batch * c.capacity, inner}, a, dev));
      Tensor k = Tensor::empty({sources.tokens(), inner}, a, dev), v = Tensor::empty({sources.tokens(), inner}, a, dev);
      linear_forward(encoder, param(b.cross.k), Tensor(), k);
      linear_forward(encoder, param(b.cross.v), Tensor(), v);
      c.cross_k.push_back(k);
      c.cross_v.push_back(v);
    }
    allocate_step_buffers(c);
  }

  // One decoder position for every sequence: returns the final-normed output [B, d_model].
  Tensor& step(Cache& c, const Tensor& tokens) {
    const int64_t t = c.steps, B = c.batch;
    if (t >= c.max_steps)
      throw Error("T5 decoding: more than the " + std::to_string(c.max_steps) + " steps the cache was made for");
    if (t == c.capacity) grow(c, std::min(2 * c.capacity, c.max_steps));
    embedding_forward(tokens, param(shared_), c.x);
    // The bias of query position t against keys 0 … t.
    Tensor buckets = Tensor::empty({1, t + 1}, DType::I32);
    for (int64_t j = 0; j <= t; ++j)
      buckets.data<int32_t>()[j] = relative_position_bucket(j - t, false, config_.buckets, config_.max_distance);
    Tensor bias = prefix_view(c.bias, {config_.heads, 1, t + 1});
    relative_bias_forward(buckets.to(params_.device()), param(table_), bias);
    // One query per sequence, against its t + 1 cached positions and its source's rows.
    const PackedSequences queries = PackedSequences::from_lengths(std::vector<int64_t>(static_cast<size_t>(B), 1)),
                          cached = PackedSequences::from_lengths(std::vector<int64_t>(static_cast<size_t>(B), t + 1));
    const AttentionPairs self_pairs(queries, cached), cross_pairs(queries, c.sources);
    BiasedAttentionShape self{config_.heads, config_.d_kv};
    self.causal = true;
    self.query_offset = t;
    self.key_stride = c.capacity;
    const BiasedAttentionShape cross{config_.heads, config_.d_kv};
    Tensor none;
    for (size_t l = 0; l < blocks_.size(); ++l) {
      const Block& b = blocks_[l];
      // Self-attention: this position's key and value join the cache.
      rms_norm_forward(c.x, param(b.self.norm), config_.layer_norm_eps, c.normed, c.rstd);
      linear_forward(c.normed, param(b.self.q), none, c.q);
      linear_forward(c.normed, param(b.self.k), none, c.k);
      linear_forward(c.normed, param(b.self.v), none, c.v);
      copy_rows_strided(c.k, c.self_k[l], t, c.capacity);
      copy_rows_strided(c.v, c.self_v[l], t, c.capacity);
      attend(c, self_pairs, self, c.self_k[l], c.self_v[l], bias, b.self.o);
      // Cross-attention over the cached encoder keys and values.
      rms_norm_forward(c.x, param(b.cross.norm), config_.layer_norm_eps, c.normed, c.rstd);
      linear_forward(c.normed, param(b.cross.q), none, c.q);
      attend(c, cross_pairs, cross, c.cross_k[l], c.cross_v[l], none, b.cross.o);
      feed_forward(b.ff, c.ff, c.x, none, DropoutContext{}, 0);
      c.x.copy_from(c.ff.out);
    }
    rms_norm_forward(c.x, param(final_norm_), config_.layer_norm_eps, c.logits_in, c.rstd);
    ++c.steps;
    return c.logits_in;
  }

  // The self-attention caches with room for capacity steps per sequence, the steps so far kept.
  void grow(Cache& c, int64_t capacity) {
    std::vector<int32_t> index;
    index.reserve(static_cast<size_t>(c.batch * capacity));
    for (int64_t i = 0; i < c.batch; ++i)
      for (int64_t s = 0; s < capacity; ++s)  // the new steps' rows are written before they are read
        index.push_back(static_cast<int32_t>(i * c.capacity + (s < c.steps ? s : 0)));
    const Tensor rows = Tensor::from<int32_t>({c.batch * capacity}, index).to(params_.device());
    for (size_t l = 0; l < blocks_.size(); ++l)
      for (Tensor* t : {&c.self_k[l], &c.self_v[l]}) {
        Tensor grown = Tensor::empty({c.batch * capacity, config_.inner()}, t->dtype(), t->device());
        gather_rows(*t, rows, grown);
        *t = grown;
      }
    c.capacity = capacity;
    allocate_step_buffers(c);
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
    const Device dev = params_.device();
    // The self-attention caches move each sequence's steps so far and keep room for the next one
    // only: a beam search reorders at every step, so its caches never hold more than they need (as
    // capacity rows per sequence did: up to twice the steps); step() grows them when no reorder came.
    const int64_t inner = config_.inner(), capacity = std::min(c.max_steps, c.steps + 1);
    std::vector<int32_t> step_rows;
    step_rows.reserve(static_cast<size_t>(n * capacity));
    for (int32_t r : rows)
      for (int64_t s = 0; s < capacity; ++s)  // the next step's row is written before it is read
        step_rows.push_back(static_cast<int32_t>(r * c.capacity + (s < c.steps ? s : 0)));
    const Tensor step_index = Tensor::from<int32_t>({n * capacity}, step_rows).to(dev);
    for (size_t l = 0; l < blocks_.size(); ++l)
      for (Tensor* t : {&c.self_k[l], &c.self_v[l]}) {
        Tensor gathered = Tensor::empty({n * capacity, inner}, t->dtype(), dev);
        gather_rows(*t, step_index, gathered);
        *t = gathered;
      }
    c.capacity = capacity;
    // The cross-attention's move each source's rows, unless every sequence still reads the source it
    // read (a beam search step that finishes no source: its beams only change places within a source).
    std::vector<int32_t> source_of;
    for (int32_t r : rows) source_of.push_back(c.source_of[static_cast<size_t>(r)]);
    if (source_of != c.source_of) {
      std::vector<int64_t> lengths;
      std::vector<int32_t> source_rows;
      for (int32_t r : rows) {
        lengths.push_back(c.sources.length(r));
        for (int64_t j = 0; j < c.sources.length(r); ++j)
          source_rows.push_back(static_cast<int32_t>(c.sources.offsets[static_cast<size_t>(r)] + j));
      }
      const auto m = static_cast<int64_t>(source_rows.size());
      const Tensor row_index = Tensor::from<int32_t>({m}, source_rows).to(dev);
      for (size_t l = 0; l < blocks_.size(); ++l)
        for (Tensor* t : {&c.cross_k[l], &c.cross_v[l]}) {
          Tensor gathered = Tensor::empty({m, inner}, t->dtype(), dev);
          gather_rows(*t, row_index, gathered);
          *t = gathered;
        }
      c.sources = PackedSequences::from_lengths(lengths);
      c.source_of = std::move(source_of);
    }
    c.batch = n;
    allocate_step_buffers(c);
  }

 private:
  BiasedAttentionShape self_shape() const {
    BiasedAttentionShape s{config_.heads, config_.d_kv};
    s.causal = decoder_;
    return s;
  }
  BiasedAttentionShape cross_shape() const { return BiasedAttentionShape{config_.heads, config_.d_kv}; }

  // The buffers of the batch in seqs_ (and sources_): views into the grow-only workspace.
  void ensure_buffers() {
    workspace_.begin();
    const int64_t n = seqs_.tokens(), m = decoder_ ? sources_.tokens() : 0, d = config_.d_model,
                  inner = config_.inner(), f = config_.d_ff, a = config_.heads, len = seqs_.max_len;
    const DType dt = params_.compute_dtype();
    auto buf = [&](Shape shape, DType type) { return workspace_.buffer(std::move(shape), type); };
    ids_ = buf({n}, DType::I32);
    numbers_ = p_ > 0 ? buf({n}, DType::I64) : Tensor();
    emb_ = buf({n, d}, dt);
    emb_mask_ = buf({n, d}, DType::U8);
    bias_ = buf({a, len, len}, dt);
    // The bucket of every (query, key) pair of the longest sequence (every sequence reads its
    // top-left corner), on the host, then to the device; kept while the longest length is.
    if (buckets_len_ != len) {
      Tensor host = Tensor::empty({len, len}, DType::I32);
      for (int64_t i = 0; i < len; ++i)
        for (int64_t j = 0; j < len; ++j)
          host.data<int32_t>()[i * len + j] =
              relative_position_bucket(j - i, !decoder_, config_.buckets, config_.max_distance);
      buckets_ = Tensor::empty({len, len}, DType::I32, params_.device());
      buckets_.copy_from(host);
      buckets_len_ = len;
    }
    const int64_t self_scores = self_pairs_->score_elements(a),
                  cross_scores = decoder_ ? cross_pairs_->score_elements(a) : 0;
    auto attention_buffers = [&](AttentionSaved& s, int64_t keys, int64_t scores) {
      s.normed = buf({n, d}, dt);
      s.rstd = buf({n}, DType::F32);
      s.q = buf({n, inner}, dt);
      s.k = buf({keys, inner}, dt);
      s.v = buf({keys, inner}, dt);
      s.ctx = buf({n, inner}, dt);
      s.probs = buf({scores}, dt);
      s.probs_mask = buf({scores}, DType::U8);
      s.out_mask = buf({n, d}, DType::U8);
      s.out = buf({n, d}, dt);
    };
    for (Block& b : blocks_) {
      attention_buffers(b.self_saved, n, self_scores);
      if (decoder_) attention_buffers(b.cross_saved, m, cross_scores);
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
    d_scores_ = buf({self_scores}, dt);
  }

  // s.out = x + dropout(o(attention(q = norm(x)·Wq, k = source·Wk, v = source·Wv))); source is
  // s.normed itself for self-attention.
  void attention_forward(const AttentionParams& p, AttentionSaved& s, const Tensor& x, const Tensor& source,
                         const AttentionPairs& pairs, const BiasedAttentionShape& shape, const Tensor& bias,
                         const DropoutContext& dropout, uint64_t site) {
    Tensor none;
    s.in = x;
    rms_norm_forward(x, param(p.norm), config_.layer_norm_eps, s.normed, s.rstd);
    linear_forward(s.normed, param(p.q), none, s.q);
    linear_forward(source, param(p.k), none, s.k);
    linear_forward(source, param(p.v), none, s.v);
    biased_attention_forward(s.q, s.k, s.v, bias, pairs, shape, p_, site_key(dropout, site), s.ctx, s.probs,
                             s.probs_mask);
    linear_forward(s.ctx, param(p.o), none, s.out);
    dropout_forward(s.out, p_, site_key(dropout, site + 1), numbers_, s.out, s.out_mask);
    add(s.out, x, s.out);
  }

  // dx_ holds the gradient of s.out; afterwards, that of s.in. `source` and d_source: the keys'
  // and values' input and its gradient (self: s.normed and d_normed_, which the query adds to).
  void attention_backward(const AttentionParams& p, AttentionSaved& s, const Tensor& source, Tensor& d_source,
                          const AttentionPairs& pairs, const BiasedAttentionShape& shape, bool self) {
    Tensor none;
    const int64_t inner = config_.inner(), keys = pairs.keys->tokens();
    dropout_backward(dx_, s.out_mask, p_, d_out_);
    linear_backward(d_out_, s.ctx, param(p.o), d_ctx_, grad(p.o), none);
    Tensor dk = prefix_view(d_k_, {keys, inner}), dv = prefix_view(d_v_, {keys, inner});
    Tensor dscores = self ? d_scores_ : Tensor();
    biased_attention_backward(d_ctx_, s.q, s.k, s.v, s.probs, s.probs_mask, pairs, shape, p_, d_q_, dk, dv, dscores);
    if (self) relative_bias_backward(dscores, pairs, buckets_, grad(table_));
    // The query's input gradient first (overwrite), then the keys' and values' (added).
    linear_backward(d_q_, s.normed, param(p.q), d_normed_, grad(p.q), none);
    linear_backward(dk, source, param(p.k), d_source, grad(p.k), none, GradMode::Accumulate);
    linear_backward(dv, source, param(p.v), d_source, grad(p.v), none, GradMode::Accumulate);
    rms_norm_backward(d_normed_, s.in, param(p.norm), s.rstd, dx_, grad(p.norm), GradMode::Accumulate);
  }

  // s.out = x + dropout(wo(dropout(act(norm(x)))))), act = relu(wi·) or gelu_tanh(wi_0·) ⊙ wi_1·;
  // numbers: the rows' token numbers (undefined without dropout).
  void feed_forward(const FeedForwardParams& p, FeedForwardSaved& s, const Tensor& x, const Tensor& numbers,
                    const DropoutContext& dropout, uint64_t site) {
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
    dropout_forward(s.hidden, p_, site_key(dropout, site), numbers, s.hidden, train ? s.hidden_mask : none);
    linear_forward(s.hidden, param(p.wo), none, s.out);
    dropout_forward(s.out, p_, site_key(dropout, site + 1), numbers, s.out, train ? s.out_mask : none);
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
  void attend(Cache& c, const AttentionPairs& pairs, const BiasedAttentionShape& shape, const Tensor& k,
              const Tensor& v, const Tensor& bias, size_t o) {
    Tensor none;
    Tensor probs = prefix_view(c.probs, {pairs.score_elements(config_.heads)});
    biased_attention_forward(c.q, k, v, bias, pairs, shape, 0, {}, c.ctx, probs, none);
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
    c.probs = Tensor::empty({config_.heads * std::max(batch * c.capacity, c.sources.tokens())}, a, dev);
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
  PackedSequences seqs_, sources_;  // this pass's sequences, and (decoder) the sources it attends to
  std::optional<AttentionPairs> self_pairs_, cross_pairs_;
  float p_ = 0;
  int64_t buckets_len_ = -1;
  Tensor ids_, numbers_, emb_, emb_mask_, buckets_, bias_, last_, out_, out_rstd_, out_mask_;
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
  const int64_t S = batch.sources.tokens(), T = batch.targets.tokens(), d = config_.d_model;
  check_shape(batch.input_ids, {S}, "T5", "input_ids");
  check_shape(batch.decoder_input_ids, {T}, "T5", "decoder_input_ids");
  check_shape(batch.labels, {T}, "T5", "labels");
  if (batch.targets.sequences() != batch.sources.sequences())
    throw Error("T5: " + std::to_string(batch.sources.sequences()) + " sources and " +
                std::to_string(batch.targets.sequences()) + " targets");
  workspace_.begin();
  const DType a = params_.compute_dtype();
  labels_ = workspace_.buffer({T}, DType::I32);
  head_in_ = workspace_.buffer({T, d}, a);
  logits_ = workspace_.buffer({T, config_.vocab_size}, a);
  d_decoder_ = workspace_.buffer({T, d}, a);
  d_encoder_ = workspace_.buffer({S, d}, a);
  const Tensor& encoded = encoder_->forward(batch.input_ids, batch.sources, Tensor(), nullptr, dropout, 0);
  const uint64_t decoder_sites = 2 + kSitesPerBlock * static_cast<uint64_t>(config_.layers);
  const Tensor& decoded =
      decoder_->forward(batch.decoder_input_ids, batch.targets, encoded, &batch.sources, dropout, decoder_sites);
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

void T5Model::start_decoding(const Tensor& input_ids, const PackedSequences& sources, int64_t max_steps,
                             int64_t first_capacity) {
  if (max_steps <= 0 || first_capacity <= 0) throw Error("T5 decoding: max_steps and first_capacity must be positive");
  check_shape(input_ids, {sources.tokens()}, "T5 decoding", "input_ids");
  const Tensor& encoded = encoder_->forward(input_ids, sources, Tensor(), nullptr, {}, 0);
  decode_ = std::make_unique<DecodeState>();
  decoder_->start(decode_->cache, encoded, sources, max_steps, first_capacity);
  decode_->logits = Tensor::empty({sources.sequences(), config_.vocab_size}, params_.compute_dtype(), params_.device());
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
