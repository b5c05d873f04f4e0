// Corpus BLEU (Papineni et al. 2002) and chrF (Popović 2015), computed here to score generated
// sentences against references.
//  - BLEU: n-grams of orders 1–4 over tokens (words split on whitespace, then punctuation split off
//    as sacreBLEU's 13a tokenizer does: ASCII punctuation other than . , - always; . and , unless
//    between digits; - after a digit), clipped counts summed over the corpus, the geometric mean of
//    the four precisions times the brevity penalty exp(1 − r/c) when c < r; no smoothing (0 when an
//    order has no match). Reported as 0–100.
//  - chrF: character n-grams of orders 1–6 with whitespace removed, matches summed over the corpus
//    per order; precision P and recall R are the means over the orders both sides have n-grams of,
//    F = (1 + β²)·P·R / (β²·P + R) with β = 2 (sacreBLEU's chrF defaults). Reported as 0–100.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kglm::verbalize {

std::vector<std::string> bleu_tokens(std::string_view sentence);

// Sufficient statistics, summed sentence by sentence.
struct BleuStats {
  std::array<int64_t, 4> matches{}, totals{};
  int64_t hypothesis_length = 0, reference_length = 0;
  void add(std::string_view hypothesis, std::string_view reference);
  double score() const;
};

struct ChrfStats {
  std::array<int64_t, 6> matches{}, hypothesis{}, reference{};
  void add(std::string_view hypothesis, std::string_view reference);
  double score(double beta = 2.0) const;
};

}  // namespace kglm::verbalize
