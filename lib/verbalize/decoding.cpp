#include "verbalize/decoding.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "nn/ops/cross_entropy.hpp"
#include "nn/ops/elementwise.hpp"

namespace kglm::verbalize {

namespace {

constexpr uint32_t kSampleStream = 0x73616d70;  // "samp"

// A decode step's logits as host F32: those on the CPU in place, a device's copied once per step.
nn::Tensor host_logits(const nn::Tensor& logits) {
  nn::Tensor f32 = logits;
  if (logits.dtype() != nn::DType::F32) {
    f32 = nn::Tensor::empty(logits.shape(), nn::DType::F32, logits.device());
    nn::convert(logits, f32);
  }
  return f32.to(nn::Device::Cpu);
}

// log Σ exp(logits), in double: a row's log-probabilities are logits[i] − this.
double log_sum_exp(const float* logits, int64_t v) {
  const double max = *std::max_element(logits, logits + v);
  double sum = 0;
  for (int64_t i = 0; i < v; ++i) sum += std::exp(static_cast<double>(logits[i]) - max);
  return max + std::log(sum);
}

// The `keep` tokens of highest logit, highest first (ties: the lower id), in one pass that keeps
// them sorted: a beam offers no more than 2 × beams candidates, so the row is never sorted.
void top_tokens(const float* logits, int64_t v, size_t keep, std::vector<int32_t>& out) {
  out.clear();
  if (keep == 0) return;
  for (int64_t t = 0; t < v; ++t) {
    const float x = logits[t];
    if (out.size() == keep) {
      if (!(x > logits[out.back()])) continue;
      out.pop_back();
    }
    const auto at =
        std::upper_bound(out.begin(), out.end(), x, [&](float value, int32_t id) { return value > logits[id]; });
    out.insert(at, static_cast<int32_t>(t));
  }
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

// Greedy decoding and sampling: one sequence per source. A finished sequence leaves the batch.
std::vector<std::vector<int32_t>> decode_single(nn::T5Model& model, const SourceBatch& s, const DecodeOptions& o,
                                                std::span<const uint64_t> keys) {
  const nn::T5Config& c = model.config();
  const int64_t v = c.vocab_size;
  model.start_decoding(s.input_ids, s.sequences, o.max_len);
  std::vector<std::vector<int32_t>> out(static_cast<size_t>(s.batch()));
  std::vector<size_t> active(static_cast<size_t>(s.batch()));  // row r of the batch decodes source active[r]
  std::iota(active.begin(), active.end(), size_t{0});
  std::vector<int32_t> tokens(active.size(), static_cast<int32_t>(c.decoder_start_token_id));
  std::vector<int32_t> best;
  std::vector<double> best_log_probs;
  for (int64_t step = 0; step < o.max_len && !active.empty(); ++step) {
    const nn::Tensor& logits =
        model.decode_step(nn::Tensor::from<int32_t>({static_cast<int64_t>(active.size())}, tokens));
    std::vector<int32_t> keep;
    std::vector<size_t> still;
    std::vector<int32_t> next_tokens;
    nn::Tensor host;  // sampling reads the logits on the host; greedy reads back each row's argmax only
    if (o.method == DecodeMethod::Greedy) {
      nn::best_classes(logits, best, best_log_probs);  // each row's first maximum
    } else {
      host = host_logits(logits);
    }
    for (size_t r = 0; r < active.size(); ++r) {
      int32_t next;
      if (o.method == DecodeMethod::Sample) {
        Rng rng(o.seed, keys[active[r]], kSampleStream + static_cast<uint32_t>(step));
        next = sample_top_k(host.data<float>() + static_cast<int64_t>(r) * v, v, o, rng);
      } else {
        next = best[r];
      }
      if (next == c.eos_token_id) continue;
      out[active[r]].push_back(next);
      keep.push_back(static_cast<int32_t>(r));
      still.push_back(active[r]);
      next_tokens.push_back(next);
    }
    if (!still.empty() && still.size() < active.size()) model.reorder_cache(keep);
    active = std::move(still);
    tokens = std::move(next_tokens);
  }
  return out;
}

struct Hypothesis {
  std::vector<int32_t> tokens;
  double score = 0;  // normalised
};

// Beam search: the batch of sources is encoded once, then widened to k rows per source; a source's
// rows leave the batch when it is done.
std::vector<std::vector<int32_t>> decode_beams(nn::T5Model& model, const SourceBatch& s, const DecodeOptions& o) {
  const nn::T5Config& c = model.config();
  const int64_t b = s.batch(), k = o.beams, v = c.vocab_size;
  model.start_decoding(s.input_ids, s.sequences, o.max_len);
  std::vector<int32_t> widen;
  for (int64_t i = 0; i < b; ++i)
    for (int64_t j = 0; j < k; ++j) widen.push_back(static_cast<int32_t>(i));
  model.reorder_cache(widen);
  const double lowest = -std::numeric_limits<double>::infinity();
  // Per active source (in batch order): its k beams' scores and tokens.
  std::vector<size_t> active(static_cast<size_t>(b));
  std::iota(active.begin(), active.end(), size_t{0});
  std::vector<double> score(static_cast<size_t>(b * k), lowest);
  for (int64_t i = 0; i < b; ++i) score[static_cast<size_t>(i * k)] = 0;  // the first step expands one beam
  std::vector<std::vector<int32_t>> beam(static_cast<size_t>(b * k));
  std::vector<std::vector<Hypothesis>> finished(static_cast<size_t>(b));
  std::vector<int32_t> tokens(static_cast<size_t>(b * k), static_cast<int32_t>(c.decoder_start_token_id));
  std::vector<int32_t> top;
  struct Candidate {
    double score;
    int64_t beam;
    int32_t token;
  };
  auto normalised = [&](double sum, size_t generated) {
    return sum / std::pow(static_cast<double>(generated), o.length_penalty);
  };
  for (int64_t step = 0; step < o.max_len && !active.empty(); ++step) {
    const auto rows = static_cast<int64_t>(active.size()) * k;
    const nn::Tensor logits = host_logits(model.decode_step(nn::Tensor::from<int32_t>({rows}, tokens)));
    std::vector<int32_t> order;  // the next batch's rows, from this one's
    std::vector<size_t> still;
    std::vector<double> new_score;
    std::vector<std::vector<int32_t>> new_beam;
    std::vector<int32_t> new_tokens;
    for (size_t a = 0; a < active.size(); ++a) {
      const size_t example = active[a];
      const auto first = static_cast<int64_t>(a) * k;
      // The best 2k of the beams' expansions are among each beam's best 2k tokens.
      std::vector<Candidate> candidates;
      for (int64_t j = 0; j < k; ++j) {
        const auto r = static_cast<size_t>(first + j);
        if (score[r] == lowest) continue;
        const float* row = logits.data<float>() + static_cast<int64_t>(r) * v;
        const double log_sum = log_sum_exp(row, v);
        top_tokens(row, v, static_cast<size_t>(2 * k), top);
        for (int32_t t : top) candidates.push_back({score[r] + (static_cast<double>(row[t]) - log_sum), j, t});
      }
      const size_t keep = std::min(candidates.size(), static_cast<size_t>(2 * k));
      std::partial_sort(candidates.begin(), candidates.begin() + static_cast<int64_t>(keep), candidates.end(),
                        [](const Candidate& x, const Candidate& y) {
                          return x.score > y.score ||
                                 (x.score == y.score && (x.beam < y.beam || (x.beam == y.beam && x.token < y.token)));
                        });
      std::vector<Candidate> chosen;
      for (size_t rank = 0; rank < keep && static_cast<int64_t>(chosen.size()) < k; ++rank) {
        const Candidate& cand = candidates[rank];
        if (cand.token == c.eos_token_id) {
          const std::vector<int32_t>& history = beam[static_cast<size_t>(first + cand.beam)];
          if (rank < static_cast<size_t>(k))  // an </s> below the best k does not finish a hypothesis
            finished[example].push_back({history, normalised(cand.score, history.size() + 1)});
          continue;
        }
        chosen.push_back(cand);
      }
      if (static_cast<int64_t>(finished[example].size()) >= k || chosen.empty()) continue;  // done
      still.push_back(example);
      for (int64_t j = 0; j < k; ++j) {
        if (j < static_cast<int64_t>(chosen.size())) {
          const Candidate& cand = chosen[static_cast<size_t>(j)];
          order.push_back(static_cast<int32_t>(first + cand.beam));
          new_score.push_back(cand.score);
          new_beam.push_back(beam[static_cast<size_t>(first + cand.beam)]);
          new_beam.back().push_back(cand.token);
          new_tokens.push_back(cand.token);
        } else {  // fewer candidates than beams: an empty beam (never expanded)
          order.push_back(static_cast<int32_t>(first));
          new_score.push_back(lowest);
          new_beam.emplace_back();
          new_tokens.push_back(static_cast<int32_t>(c.pad_token_id));
        }
      }
    }
    // Out of length: the running beams of the unfinished sources compete too.
    if (step + 1 == o.max_len)
      for (size_t a = 0; a < still.size(); ++a)
        for (int64_t j = 0; j < k; ++j) {
          const auto r = static_cast<size_t>(static_cast<int64_t>(a) * k + j);
          if (new_score[r] != lowest)
            finished[still[a]].push_back({new_beam[r], normalised(new_score[r], new_beam[r].size())});
        }
    if (!still.empty()) model.reorder_cache(order);
    active = std::move(still);
    score = std::move(new_score);
    beam = std::move(new_beam);
    tokens = std::move(new_tokens);
  }
  std::vector<std::vector<int32_t>> out(static_cast<size_t>(b));
  for (int64_t i = 0; i < b; ++i) {
    const std::vector<Hypothesis>& f = finished[static_cast<size_t>(i)];
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
  if (sources.batch() == 0) return {};
  if (o.method == DecodeMethod::Beam) {
    if (o.beams < 1) throw UsageError("--beams must be ≥ 1");
    return decode_beams(model, sources, o);
  }
  if (o.method == DecodeMethod::Sample) {
    if (o.top_k < 1) throw UsageError("--top-k must be ≥ 1");
    if (!(o.temperature > 0)) throw UsageError("--temperature must be > 0");
    if (static_cast<int64_t>(keys.size()) != sources.batch()) throw Error("decode: one sampling key per source needed");
  }
  return decode_single(model, sources, o, keys);
}

}  // namespace kglm::verbalize
