// Corpus BLEU (Papineni et al. 2002) and chrF (Popović 2015) of generated sentences against
// references, computed as sacreBLEU 2.x computes them with its defaults, so kglm's numbers can be put
// beside published ones (tests/references/sacrebleu_check.py compares the two):
//  - BLEU: each line has its trailing whitespace removed and is tokenised by 13a (mteval-v13a):
//    "<skipped>" removed, &quot; &amp; &lt; &gt; unescaped, ASCII punctuation other than ' . , -
//    split off, . and , split off unless preceded by a digit, then unless followed by one, - split
//    off after a digit, then split on whitespace (Unicode's, as Python's str.split). N-grams of
//    orders 1–4, clipped counts summed over the corpus, the geometric mean of the precisions times
//    the brevity penalty exp(1 − r/c) when c < r. An order without matches is smoothed as mteval's
//    "exp" method does (sacreBLEU's default): its precision is 1/(2^k · total) for the k-th such
//    order; BLEU is 0 when nothing matches at all or an order has no hypothesis n-gram. 0–100.
//  - chrF: character n-grams of orders 1–6 with (Unicode) whitespace removed, counts summed over the
//    corpus per order (a sentence's hypothesis n-grams of an order its reference lacks not counted); precision P and
//    recall R are the means over the orders both sides have n-grams of, F = (1 + β²)·P·R / (β²·P + R) with β = 2.
//    0–100.
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
