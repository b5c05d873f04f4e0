#include "probe/cloze_decoder.hpp"

#include <algorithm>
#include <numeric>

#include "core/error.hpp"

namespace kglm::probe {

DecodeMethod parse_decode_method(const std::string& name) {
  if (name == "independent") return DecodeMethod::independent;
  if (name == "order") return DecodeMethod::order;
  if (name == "confidence") return DecodeMethod::confidence;
  throw UsageError("--method: '" + name + "' is not independent, order or confidence");
}

const char* decode_method_name(DecodeMethod method) {
  switch (method) {
    case DecodeMethod::independent:
      return "independent";
    case DecodeMethod::order:
      return "order";
    case DecodeMethod::confidence:
      return "confidence";
  }
  return "?";
}

double ClozeCandidate::sum_log_prob() const { return std::accumulate(log_probs.begin(), log_probs.end(), 0.0); }

double ClozeCandidate::score(bool normalise) const {
  const double sum = sum_log_prob();
  return normalise && masks > 0 ? sum / masks : sum;
}

namespace {

struct Pending {
  size_t candidate;
  std::vector<int32_t> slots;  // mask slots (0-based within the candidate) asked about
};

// One round: asks the filler about each pending candidate's slots; guesses[i][k] answers
// pending[i].slots[k].
std::vector<std::vector<TokenGuess>> ask(MaskFiller& filler, const std::vector<ClozeCandidate>& candidates,
                                         const std::vector<Pending>& pending) {
  std::vector<FillRequest> requests(pending.size());
  for (size_t i = 0; i < pending.size(); ++i) {
    const ClozeCandidate& c = candidates[pending[i].candidate];
    requests[i].ids = &c.ids;
    for (int32_t s : pending[i].slots) requests[i].positions.push_back(c.first + s);
  }
  std::vector<std::vector<TokenGuess>> guesses;
  filler.fill(requests, guesses);
  return guesses;
}

void set(ClozeCandidate& c, int32_t slot, const TokenGuess& g) {
  c.tokens[static_cast<size_t>(slot)] = g.token;
  c.log_probs[static_cast<size_t>(slot)] = g.log_prob;
  c.ids[static_cast<size_t>(c.first + slot)] = g.token;
}

// The first slot whose guess is best (confidence: the most probable; refinement: the least).
size_t pick(const std::vector<TokenGuess>& guesses, bool most_probable) {
  size_t best = 0;
  for (size_t k = 1; k < guesses.size(); ++k) {
    const bool better =
        most_probable ? guesses[k].log_prob > guesses[best].log_prob : guesses[k].log_prob < guesses[best].log_prob;
    if (better) best = k;
  }
  return best;
}

// Fills every mask: all at once (independent), the leftmost (order) or the most probable
// (confidence) per pass.
void fill_masks(DecodeMethod method, MaskFiller& filler, std::vector<ClozeCandidate>& candidates) {
  std::vector<std::vector<int32_t>> open(candidates.size());  // unfilled slots, ascending
  for (size_t i = 0; i < candidates.size(); ++i) {
    open[i].resize(static_cast<size_t>(candidates[i].masks));
    std::iota(open[i].begin(), open[i].end(), 0);
  }
  for (;;) {
    std::vector<Pending> pending;
    for (size_t i = 0; i < candidates.size(); ++i) {
      if (open[i].empty()) continue;
      // order needs only the leftmost mask's distribution.
      if (method == DecodeMethod::order)
        pending.push_back({i, {open[i].front()}});
      else
        pending.push_back({i, open[i]});
    }
    if (pending.empty()) return;
    const auto guesses = ask(filler, candidates, pending);
    for (size_t p = 0; p < pending.size(); ++p) {
      const size_t i = pending[p].candidate;
      if (method == DecodeMethod::independent) {
        for (size_t k = 0; k < pending[p].slots.size(); ++k) set(candidates[i], pending[p].slots[k], guesses[p][k]);
        open[i].clear();
        continue;
      }
      const size_t k = method == DecodeMethod::order ? 0 : pick(guesses[p], true);
      set(candidates[i], pending[p].slots[k], guesses[p][k]);
      open[i].erase(open[i].begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
}

// Confidence's refinement: mask the least probable token again and predict it, until the
// prediction stays or max_iter tokens were replaced.
void refine(MaskFiller& filler, std::vector<ClozeCandidate>& candidates, int32_t max_iter) {
  std::vector<size_t> active;
  for (size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].masks > 0 && max_iter > 0) active.push_back(i);
  const int32_t mask = filler.mask_id();
  while (!active.empty()) {
    std::vector<Pending> pending;
    std::vector<int32_t> previous;
    for (size_t i : active) {
      ClozeCandidate& c = candidates[i];
      std::vector<TokenGuess> current(static_cast<size_t>(c.masks));
      for (size_t k = 0; k < current.size(); ++k) current[k] = {c.tokens[k], c.log_probs[k]};
      const auto slot = static_cast<int32_t>(pick(current, false));
      previous.push_back(c.tokens[static_cast<size_t>(slot)]);
      c.ids[static_cast<size_t>(c.first + slot)] = mask;
      pending.push_back({i, {slot}});
    }
    const auto guesses = ask(filler, candidates, pending);
    std::vector<size_t> next;
    for (size_t p = 0; p < pending.size(); ++p) {
      ClozeCandidate& c = candidates[pending[p].candidate];
      const int32_t slot = pending[p].slots[0];
      if (guesses[p][0].token == previous[p]) {
        c.ids[static_cast<size_t>(c.first + slot)] = previous[p];  // unchanged: done
        continue;
      }
      set(c, slot, guesses[p][0]);
      if (++c.refinements < max_iter) next.push_back(pending[p].candidate);
    }
    active = std::move(next);
  }
}

}  // namespace

void decode(DecodeMethod method, MaskFiller& filler, std::vector<ClozeCandidate>& candidates, int32_t max_iter) {
  const int32_t mask = filler.mask_id();
  for (ClozeCandidate& c : candidates) {
    if (c.first < 0 || c.masks < 0 || static_cast<size_t>(c.first + c.masks) > c.ids.size())
      throw Error("probe: a cloze's masks lie outside its sequence");
    for (int32_t k = 0; k < c.masks; ++k) c.ids[static_cast<size_t>(c.first + k)] = mask;
    c.tokens.assign(static_cast<size_t>(c.masks), mask);
    c.log_probs.assign(static_cast<size_t>(c.masks), 0.0);
    c.refinements = 0;
  }
  fill_masks(method, filler, candidates);
  if (method == DecodeMethod::confidence) refine(filler, candidates, max_iter);
}

}  // namespace kglm::probe
