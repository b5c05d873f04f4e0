#include "verbalize/decoding.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace kglm::verbalize {

namespace {

constexpr uint32_t kSampleStream = 0x73616d70;  // "samp"

// log softmax of one row of logits, in double.
void log_softmax(const float* logits, int64_t v, std::vector<double>& out) {
  out.resize(static_cast<size_t>(v));
  const double max = *std::max_element(logits, logits + v);
  double sum = 0;
  for (int64_t i = 0; i < v; ++i) sum += std::exp(static_cast<double>(logits[i]) - max);
  const double log_sum = max + std::log(sum);
  for (int64_t i = 0; i < v; ++i) out[static_cast<size_t>(i)] = logits[i] - log_sum;
}

// The first maximum, as torch.argmax.
int32_t argmax(const float* logits, int64_t v) {
  return static_cast<int32_t>(std::max_element(logits, logits + v) - logits);
}

// A draw from the top k of softmax(logits / temperature); ties broken by the lower id.
int32_t sample_top_k(const float* logits, int64_t v, const DecodeOptions& o, Rng& rng) {
  const auto k = static_cast<size_t>(std::min<int64_t>(o.top_k, v));
  std::vector<int32_t> ids(static_cast<size_t>(v));
  std::iota(ids.begin(), ids.end(), 0);
  std::partial_sort(ids.begin(), ids.begin() + static_cast<int64_t>(k), ids.end(),
                    [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); });
  std::vector<double> weights(k);
  const double top = logits[ids[0]];
  double sum = 0;
  for (size_t i = 0; i < k; ++i) sum += weights[i] = std::exp((logits[ids[i]] - top) / o.temperature);
  double u = rng.uniform() * sum;
  for (size_t i = 0; i < k; ++i) {
    if (u < weights[i]) return ids[i];
    u -= weights[i];
  }
  return ids[k - 1];
}

// Greedy decoding and sampling: one sequence per source.
std::vector<std::vector<int32_t>> decode_single(nn::T5Model& model, const SourceBatch& s, const DecodeOptions& o,
                                                std::span<const uint64_t> keys) {
  const nn::T5Config& c = model.config();
  const int64_t b = s.batch, v = c.vocab_size;
  model.start_decoding(s.input_ids, s.attention_mask, b, s.length, o.max_len);
  std::vector<std::vector<int32_t>> out(static_cast<size_t>(b));
  std::vector<uint8_t> done(static_cast<size_t>(b), 0);
  std::vector<int32_t> tokens(static_cast<size_t>(b), static_cast<int32_t>(c.decoder_start_token_id));
  for (int64_t step = 0; step < o.max_len; ++step) {
    const nn::Tensor& logits = model.decode_step(nn::Tensor::from<int32_t>({b}, tokens));
    bool all_done = true;
    for (int64_t i = 0; i < b; ++i) {
      const auto r = static_cast<size_t>(i);
      if (done[r]) {
        tokens[r] = static_cast<int32_t>(c.pad_token_id);
        continue;
      }
      const float* row = logits.data<float>() + i * v;
      int32_t next;
      if (o.method == DecodeMethod::Sample) {
        Rng rng(o.seed, keys[r], kSampleStream + static_cast<uint32_t>(step));
        next = sample_top_k(row, v, o, rng);
      } else {
        next = argmax(row, v);
      }
      tokens[r] = next;
      if (next == c.eos_token_id) {
        done[r] = 1;
      } else {
        out[r].push_back(next);
        all_done = false;
      }
    }
    if (all_done) break;
  }
  return out;
}

struct Hypothesis {
  std::vector<int32_t> tokens;
  double score = 0;  // normalised
};

std::vector<std::vector<int32_t>> decode_beams(nn::T5Model& model, const SourceBatch& s, const DecodeOptions& o) {
  const nn::T5Config& c = model.config();
  const int64_t b = s.batch, k = o.beams, v = c.vocab_size, rows = b * k;
  // Every source k times: rows i·k … i·k + k − 1 are example i's beams.
  std::vector<int32_t> ids, mask;
  const int32_t* src_ids = s.input_ids.data<int32_t>();
  const int32_t* src_mask = s.attention_mask.data<int32_t>();
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < k; ++j) {
      ids.insert(ids.end(), src_ids + i * s.length, src_ids + (i + 1) * s.length);
      mask.insert(mask.end(), src_mask + i * s.length, src_mask + (i + 1) * s.length);
    }
  model.start_decoding(nn::Tensor::from<int32_t>({rows * s.length}, ids),
                       nn::Tensor::from<int32_t>({rows * s.length}, mask), rows, s.length, o.max_len);
  const double lowest = -std::numeric_limits<double>::infinity();
  std::vector<double> score(static_cast<size_t>(rows), lowest);
  for (int64_t i = 0; i < b; ++i) score[static_cast<size_t>(i * k)] = 0;  // the first step expands one beam
  std::vector<std::vector<int32_t>> beam(static_cast<size_t>(rows));
  std::vector<std::vector<Hypothesis>> finished(static_cast<size_t>(b));
  std::vector<uint8_t> done(static_cast<size_t>(b), 0);
  std::vector<int32_t> tokens(static_cast<size_t>(rows), static_cast<int32_t>(c.decoder_start_token_id));
  std::vector<double> logp;
  struct Candidate {
    double score;
    int64_t beam;
    int32_t token;
  };
  auto normalised = [&](double sum, size_t generated) {
    return sum / std::pow(static_cast<double>(generated), o.length_penalty);
  };
  for (int64_t step = 0; step < o.max_len; ++step) {
    const nn::Tensor& logits = model.decode_step(nn::Tensor::from<int32_t>({rows}, tokens));
    std::vector<int32_t> order(static_cast<size_t>(rows));
    std::iota(order.begin(), order.end(), 0);
    std::vector<double> new_score = score;
    std::vector<std::vector<int32_t>> new_beam = beam;
    bool all_done = true;
    for (int64_t i = 0; i < b; ++i) {
      if (done[static_cast<size_t>(i)]) {
        for (int64_t j = 0; j < k; ++j) tokens[static_cast<size_t>(i * k + j)] = static_cast<int32_t>(c.pad_token_id);
        continue;
      }
      std::vector<Candidate> candidates;
      candidates.reserve(static_cast<size_t>(k * v));
      for (int64_t j = 0; j < k; ++j) {
        const auto r = static_cast<size_t>(i * k + j);
        if (score[r] == lowest) continue;
        log_softmax(logits.data<float>() + static_cast<int64_t>(r) * v, v, logp);
        for (int64_t t = 0; t < v; ++t)
          candidates.push_back({score[r] + logp[static_cast<size_t>(t)], j, static_cast<int32_t>(t)});
      }
      const size_t keep = std::min(candidates.size(), static_cast<size_t>(2 * k));
      std::partial_sort(candidates.begin(), candidates.begin() + static_cast<int64_t>(keep), candidates.end(),
                        [](const Candidate& x, const Candidate& y) {
                          return x.score > y.score ||
                                 (x.score == y.score && (x.beam < y.beam || (x.beam == y.beam && x.token < y.token)));
                        });
      int64_t filled = 0;
      for (size_t rank = 0; rank < keep && filled < k; ++rank) {
        const Candidate& cand = candidates[rank];
        const std::vector<int32_t>& history = beam[static_cast<size_t>(i * k + cand.beam)];
        if (cand.token == c.eos_token_id) {
          if (rank < static_cast<size_t>(k))  // an </s> below the best k does not finish a hypothesis
            finished[static_cast<size_t>(i)].push_back({history, normalised(cand.score, history.size() + 1)});
          continue;
        }
        const auto r = static_cast<size_t>(i * k + filled);
        order[r] = static_cast<int32_t>(i * k + cand.beam);
        new_score[r] = cand.score;
        new_beam[r] = history;
        new_beam[r].push_back(cand.token);
        tokens[r] = cand.token;
        ++filled;
      }
      for (int64_t j = filled; j < k; ++j) new_score[static_cast<size_t>(i * k + j)] = lowest;
      if (static_cast<int64_t>(finished[static_cast<size_t>(i)].size()) >= k || filled == 0) {
        done[static_cast<size_t>(i)] = 1;
      } else {
        all_done = false;
      }
    }
    score = std::move(new_score);
    beam = std::move(new_beam);
    if (all_done) break;
    model.reorder_cache(order);
  }
  std::vector<std::vector<int32_t>> out(static_cast<size_t>(b));
  for (int64_t i = 0; i < b; ++i) {
    std::vector<Hypothesis>& f = finished[static_cast<size_t>(i)];
    if (!done[static_cast<size_t>(i)])  // out of length: the running beams compete too
      for (int64_t j = 0; j < k; ++j) {
        const auto r = static_cast<size_t>(i * k + j);
        if (score[r] != lowest) f.push_back({beam[r], normalised(score[r], beam[r].size())});
      }
    if (f.empty()) continue;
    // The best; the first of equals (the order they finished in).
    out[static_cast<size_t>(i)] = std::max_element(f.begin(), f.end(), [](const Hypothesis& x, const Hypothesis& y) {
                                    return x.score < y.score;
                                  })->tokens;
  }
  return out;
}

}  // namespace

std::vector<std::vector<int32_t>> decode(nn::T5Model& model, const SourceBatch& sources, const DecodeOptions& o,
                                         std::span<const uint64_t> keys) {
  if (o.max_len < 1) throw UsageError("--max-len must be ≥ 1");
  if (sources.batch == 0) return {};
  if (o.method == DecodeMethod::Beam) {
    if (o.beams < 1) throw UsageError("--beams must be ≥ 1");
    return decode_beams(model, sources, o);
  }
  if (o.method == DecodeMethod::Sample) {
    if (o.top_k < 1) throw UsageError("--top-k must be ≥ 1");
    if (!(o.temperature > 0)) throw UsageError("--temperature must be > 0");
    if (static_cast<int64_t>(keys.size()) != sources.batch) throw Error("decode: one sampling key per source needed");
  }
  return decode_single(model, sources, o, keys);
}

}  // namespace kglm::verbalize
