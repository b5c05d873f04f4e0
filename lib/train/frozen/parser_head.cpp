// Dozat & Manning's biaffine dependency parser (ICLR 2017) on frozen features: ROOT is a learned
// vector in the features' space put before each sentence's words; four ReLU MLPs with dropout
// read every row — arc-dependent and arc-head (--arc-size), label-dependent and label-head
// (--label-size) —; arc scores are biaffine, s(d, h) = dep_d · U · head_h + head_h · u (the terms
// of dep_d alone cancel in the softmax over heads); label scores are bilinear between the dependent
// and its head, torch.nn.Bilinear's form (a linear layer over their outer product). The loss is the
// cross-entropy over each word's heads plus that over its labels (each the mean over the batch's
// words), the labels scored at the gold heads. At test time each sentence's tree is the maximum
// spanning tree over the heads' log-softmax scores with one word under ROOT (spanning_tree.hpp), and
// the labels are scored at its heads. No BiLSTM is stacked on the features (they are contextual
// already); AllenNLP's parser stacks 3×400 before its MLPs.
#include <algorithm>
#include <cmath>

#include "nn/ops/block_scores.hpp"
#include "nn/ops/cross_entropy.hpp"
#include "nn/ops/elementwise.hpp"
#include "nn/ops/linear.hpp"
#include "nn/ops/outer_product.hpp"
#include "train/frozen/frozen_head.hpp"
#include "train/frozen/spanning_tree.hpp"
#include "train/tasks/task_model.hpp"

namespace kglm::train::frozen {

namespace {

using nn::Tensor;

Tensor zeros(int64_t rows, int64_t cols, nn::Device device) {
  return Tensor::zeros({rows, cols}, nn::DType::F32, device);
}
Tensor empty(int64_t rows, int64_t cols, nn::Device device) {
  return Tensor::empty({rows, cols}, nn::DType::F32, device);
}
Tensor i32(const std::vector<int32_t>& v, nn::Device device) {
  return Tensor::from({static_cast<int64_t>(v.size())}, v).to(device);
}

// The rows of a batch: each sentence's block is its ROOT row, then its words.
struct Layout {
  int64_t words = 0, rows = 0, longest = 0;
  std::vector<int32_t> source;           // per row: its row of [mixed words; ROOT]
  std::vector<int32_t> starts, lengths;  // per row: its block
  std::vector<int32_t> word_rows;        // per word: its row
  std::vector<int64_t> block_first;      // per sentence: its block's first row
};

Layout layout(const FrozenData& t, std::span<const uint32_t> sentences) {
  Layout l;
  for (uint32_t s : sentences) l.words += t.first[s + 1] - t.first[s];
  int32_t word = 0;
  for (uint32_t s : sentences) {
    const auto n = static_cast<int32_t>(t.first[s + 1] - t.first[s]);
    const auto first = static_cast<int32_t>(l.source.size());
    l.block_first.push_back(first);
    l.longest = std::max<int64_t>(l.longest, n + 1);
    for (int32_t i = 0; i <= n; ++i) {
      l.source.push_back(i == 0 ? static_cast<int32_t>(l.words) : word++);
      l.starts.push_back(first);
      l.lengths.push_back(n + 1);
      if (i > 0) l.word_rows.push_back(first + i);
    }
  }
  l.rows = static_cast<int64_t>(l.source.size());
  return l;
}

class ParserHead final : public FrozenHead {
 public:
  ParserHead(const HeadShape& s, nn::Device device)
      : FrozenHead(device, s.layers),
        width_(s.width),
        arc_(s.arc),
        label_(s.label),
        labels_(s.deprels),
        root_(params_.add("parser.root", {s.width}, nn::Parameter::Init::Normal, false)),
        arc_dep_(params_, "parser.arc_dep", s.width, s.arc, s.dropout),
        arc_head_(params_, "parser.arc_head", s.width, s.arc, s.dropout),
        label_dep_(params_, "parser.label_dep", s.width, s.label, s.dropout),
        label_head_(params_, "parser.label_head", s.width, s.label, s.dropout),
        arc_u_(params_.add("parser.arc_attention.weight", {s.arc, s.arc}, nn::Parameter::Init::Zeros, true)),
        arc_bias_(params_.add("parser.arc_attention.head_bias", {1, s.arc}, nn::Parameter::Init::Zeros, false)),
        label_w_(params_.add("parser.label_bilinear.weight", {s.deprels, s.label * s.label}, nn::Parameter::Init::Zeros,
                             true)),
        label_b_(params_.add("parser.label_bilinear.bias", {s.deprels}, nn::Parameter::Init::Zeros, false)) {
    if (s.deprels < 1) throw Error("the parser needs at least one relation label");
  }

  double train_batch(const FrozenData& t, std::span<const uint32_t> sentences, const Tensor& x, uint64_t seed,
                     uint64_t step, int64_t& counted) override {
    const nn::Device device = params_.device();
    const Layout l = layout(t, sentences);
    counted = l.words;
    if (l.words == 0) return 0;
    std::vector<int32_t> arc_targets(static_cast<size_t>(l.rows), nn::kIgnoreIndex), head_rows, deprels;
    size_t k = 0;
    for (size_t b = 0; b < sentences.size(); ++b)
      for (int64_t w = t.first[sentences[b]]; w < t.first[sentences[b] + 1]; ++w) {
        const int32_t head = t.heads[static_cast<size_t>(w)];
        arc_targets[static_cast<size_t>(l.word_rows[k++])] = head;
        head_rows.push_back(static_cast<int32_t>(l.block_first[b]) + head);
        deprels.push_back(t.deprels[static_cast<size_t>(w)]);
      }
    const nn::DropoutKey keys[4] = {
        {seed, step * 16 + 1, 0}, {seed, step * 16 + 2, 0}, {seed, step * 16 + 3, 0}, {seed, step * 16 + 4, 0}};
    forward(x, l, keys);
    const double scale = 1.0 / static_cast<double>(l.words);
    Tensor dscores = empty(l.rows, l.longest, device);
    const nn::CrossEntropyResult arcs = nn::cross_entropy(scores_, i32(arc_targets, device), dscores, scale);
    const Tensor head_index = i32(head_rows, device);
    label_logits(head_index);
    Tensor dlogits = empty(l.words, labels_, device);
    const nn::CrossEntropyResult labels = nn::cross_entropy(logits_, i32(deprels, device), dlogits, scale);

    // Labels: back through the bilinear layer to the two label MLPs' rows.
    Tensor dz = empty(l.words, label_ * label_, device), da = empty(l.words, label_, device),
           db = empty(l.words, label_, device);
    nn::linear_backward(dlogits, z_, params_[label_w_].compute, dz, params_[label_w_].grad, params_[label_b_].grad);
    nn::outer_product_backward(dz, a_, b_, da, db);
    Tensor dlabel_dep = zeros(l.rows, label_, device), dlabel_head = zeros(l.rows, label_, device);
    nn::scatter_add_rows(da, word_index_, dlabel_dep);
    nn::scatter_add_rows(db, head_index, dlabel_head);
    // Arcs: back through the biaffine scores to the two arc MLPs' rows.
    Tensor dq = empty(l.rows, arc_, device), darc_head = empty(l.rows, arc_, device), dbias = empty(l.rows, 1, device);
    Tensor dbias_rows = dbias.view({l.rows});
    nn::block_scores_backward(dscores, q_, *arc_head_out_, starts_, lengths_, dq, darc_head, dbias_rows);
    Tensor undefined;
    nn::linear_backward(dbias, *arc_head_out_, params_[arc_bias_].compute, darc_head, params_[arc_bias_].grad,
                        undefined, nn::GradMode::Accumulate);
    Tensor darc_dep = empty(l.rows, arc_, device);
    nn::linear_backward(dq, *arc_dep_out_, params_[arc_u_].compute, darc_dep, params_[arc_u_].grad, undefined);
    // The four MLPs read the same rows: their input gradients add up.
    Tensor dx = zeros(l.rows, width_, device), part = empty(l.rows, width_, device);
    for (auto [mlp, dy] : {std::pair{&arc_dep_, &darc_dep}, std::pair{&arc_head_, &darc_head},
                           std::pair{&label_dep_, &dlabel_dep}, std::pair{&label_head_, &dlabel_head}}) {
      mlp->backward(*dy, part);
      nn::accumulate(dx, part);
    }
    Tensor dsource = zeros(l.words + 1, width_, device);
    nn::scatter_add_rows(dx, source_, dsource);
    Tensor droot = params_[root_].grad.view({1, width_});
    nn::accumulate(droot, dsource.rows(l.words, l.words + 1));
    if (x.dim(0) > 1) mix_.backward(dsource.rows(0, l.words));
    return (arcs.loss_sum + labels.loss_sum) * scale;
  }

  void predict(const FrozenData& t, std::span<const uint32_t> sentences, const Tensor& x, Predictions& out) override {
    const nn::Device device = params_.device();
    const Layout l = layout(t, sentences);
    if (l.words == 0) return;
    forward(x, l, nullptr);
    const Tensor host = scores_.to(nn::Device::Cpu);
    const float* s = host.data<float>();
    std::vector<int32_t> head_rows;
    std::vector<double> w;
    for (size_t b = 0; b < sentences.size(); ++b) {
      const int64_t n = t.first[sentences[b] + 1] - t.first[sentences[b]], m = n + 1, first = l.block_first[b];
      // Each word's log-softmax over its candidate heads.
      w.assign(static_cast<size_t>(m * m), 0.0);
      for (int64_t d = 1; d < m; ++d) {
        const float* row = s + (first + d) * l.longest;
        double top = row[0], total = 0;
        for (int64_t h = 1; h < m; ++h) top = std::max(top, double{row[h]});
        for (int64_t h = 0; h < m; ++h) total += std::exp(row[h] - top);
        for (int64_t h = 0; h < m; ++h) w[static_cast<size_t>(d * m + h)] = row[h] - top - std::log(total);
      }
      const std::vector<int32_t> heads = maximum_spanning_tree(w, n);
      for (int64_t i = 0; i < n; ++i) {
        const auto word = static_cast<size_t>(t.first[sentences[b]] + i);
        out.heads[word] = heads[static_cast<size_t>(i)];
        head_rows.push_back(static_cast<int32_t>(first) + heads[static_cast<size_t>(i)]);
      }
    }
    label_logits(i32(head_rows, device));
    const std::vector<int32_t> best = tasks::argmax_rows(logits_);
    size_t k = 0;
    for (uint32_t sentence : sentences)
      for (int64_t w2 = t.first[sentence]; w2 < t.first[sentence + 1]; ++w2)
        out.deprels[static_cast<size_t>(w2)] = best[k++];
  }

 private:
  // The rows' MLP outputs and the arc scores; keys: the four MLPs' dropout keys, or none.
  void forward(const Tensor& x, const Layout& l, const nn::DropoutKey* keys) {
    const nn::Device device = params_.device();
    const Tensor& mixed = mix_.forward(x);
    Tensor source = empty(l.words + 1, width_, device);
    source.rows(0, l.words).copy_from(mixed);
    source.rows(l.words, l.words + 1).copy_from(params_[root_].compute.view({1, width_}));
    source_ = i32(l.source, device);
    starts_ = i32(l.starts, device);
    lengths_ = i32(l.lengths, device);
    word_index_ = i32(l.word_rows, device);
    rows_ = empty(l.rows, width_, device);
    nn::gather_rows(source, source_, rows_);
    arc_dep_out_ = &arc_dep_.forward(rows_, keys ? &keys[0] : nullptr);
    arc_head_out_ = &arc_head_.forward(rows_, keys ? &keys[1] : nullptr);
    label_dep_out_ = &label_dep_.forward(rows_, keys ? &keys[2] : nullptr);
    label_head_out_ = &label_head_.forward(rows_, keys ? &keys[3] : nullptr);
    q_ = empty(l.rows, arc_, device);
    Tensor undefined;
    nn::linear_forward(*arc_dep_out_, params_[arc_u_].compute, undefined, q_);
    Tensor bias = empty(l.rows, 1, device);
    nn::linear_forward(*arc_head_out_, params_[arc_bias_].compute, undefined, bias);
    scores_ = empty(l.rows, l.longest, device);
    nn::block_scores_forward(q_, *arc_head_out_, bias.view({l.rows}), starts_, lengths_, scores_);
  }

  // The label logits [words, labels] of each word with the head at head_rows.
  void label_logits(const Tensor& head_rows) {
    const nn::Device device = params_.device();
    const int64_t n = word_index_.dim(0);
    a_ = empty(n, label_, device);
    b_ = empty(n, label_, device);
    nn::gather_rows(*label_dep_out_, word_index_, a_);
    nn::gather_rows(*label_head_out_, head_rows, b_);
    z_ = empty(n, label_ * label_, device);
    nn::outer_product_forward(a_, b_, z_);
    logits_ = empty(n, labels_, device);
    nn::linear_forward(z_, params_[label_w_].compute, params_[label_b_].compute, logits_);
  }

  int64_t width_, arc_, label_, labels_;
  size_t root_;
  FeedForward arc_dep_, arc_head_, label_dep_, label_head_;
  size_t arc_u_, arc_bias_, label_w_, label_b_;
  Tensor source_, starts_, lengths_, word_index_, rows_, q_, scores_, a_, b_, z_, logits_;
  const Tensor *arc_dep_out_ = nullptr, *arc_head_out_ = nullptr, *label_dep_out_ = nullptr, *label_head_out_ = nullptr;
};

}  // namespace

std::unique_ptr<FrozenHead> make_parser_head(const HeadShape& shape, nn::Device device) {
  return std::make_unique<ParserHead>(shape, device);
}

}  // namespace kglm::train::frozen
