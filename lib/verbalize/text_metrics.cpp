#include "verbalize/text_metrics.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "tok/utf8.hpp"

namespace kglm::verbalize {

namespace {

bool digit(char c) { return c >= '0' && c <= '9'; }

// 13a's always-split punctuation: ASCII punctuation except . , - (and ' , kept in words).
bool always_split(char c) {
  return std::ispunct(static_cast<unsigned char>(c)) && c != '.' && c != ',' && c != '-' && c != '\'';
}

template <class Gram>
int64_t clipped_matches(const std::map<Gram, int64_t>& hyp, const std::map<Gram, int64_t>& ref) {
  int64_t m = 0;
  for (const auto& [g, n] : hyp)
    if (auto it = ref.find(g); it != ref.end()) m += std::min(n, it->second);
  return m;
}

// The code points of s without whitespace (invalid bytes count as one each).
std::vector<int32_t> characters(std::string_view s) {
  std::vector<int32_t> out;
  size_t i = 0;
  while (i < s.size()) {
    const size_t at = i;
    int32_t cp = tok::next_code_point(s, i);
    if (cp < 0) cp = -static_cast<int32_t>(static_cast<unsigned char>(s[at])) - 1;
    if (cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r') continue;
    out.push_back(cp);
  }
  return out;
}

}  // namespace

std::vector<std::string> bleu_tokens(std::string_view s) {
  std::string spaced;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool prev_digit = i > 0 && digit(s[i - 1]), next_digit = i + 1 < s.size() && digit(s[i + 1]);
    const bool split =
        always_split(c) || ((c == '.' || c == ',') && !(prev_digit && next_digit)) || (c == '-' && prev_digit);
    if (split) {
      spaced += ' ';
      spaced += c;
      spaced += ' ';
    } else {
      spaced += c;
    }
  }
  std::vector<std::string> tokens;
  size_t i = 0;
  while (i < spaced.size()) {
    while (i < spaced.size() && std::isspace(static_cast<unsigned char>(spaced[i]))) ++i;
    const size_t begin = i;
    while (i < spaced.size() && !std::isspace(static_cast<unsigned char>(spaced[i]))) ++i;
    if (i > begin) tokens.emplace_back(spaced.substr(begin, i - begin));
  }
  return tokens;
}

void BleuStats::add(std::string_view hypothesis, std::string_view reference) {
  const std::vector<std::string> h = bleu_tokens(hypothesis), r = bleu_tokens(reference);
  hypothesis_length += static_cast<int64_t>(h.size());
  reference_length += static_cast<int64_t>(r.size());
  for (size_t n = 1; n <= 4; ++n) {
    std::map<std::vector<std::string>, int64_t> hg, rg;
    for (size_t i = 0; i + n <= h.size(); ++i) ++hg[{h.begin() + i, h.begin() + i + n}];
    for (size_t i = 0; i + n <= r.size(); ++i) ++rg[{r.begin() + i, r.begin() + i + n}];
    matches[n - 1] += clipped_matches(hg, rg);
    totals[n - 1] += h.size() >= n ? static_cast<int64_t>(h.size() - n + 1) : 0;
  }
}

double BleuStats::score() const {
  if (hypothesis_length == 0) return 0;
  double log_sum = 0;
  for (size_t n = 0; n < 4; ++n) {
    if (matches[n] == 0 || totals[n] == 0) return 0;
    log_sum += std::log(static_cast<double>(matches[n]) / static_cast<double>(totals[n]));
  }
  const double c = static_cast<double>(hypothesis_length), r = static_cast<double>(reference_length);
  const double brevity = c < r ? std::exp(1 - r / c) : 1.0;
  return 100 * brevity * std::exp(log_sum / 4);
}

void ChrfStats::add(std::string_view hypothesis, std::string_view reference) {
  const std::vector<int32_t> h = characters(hypothesis), r = characters(reference);
  for (size_t n = 1; n <= 6; ++n) {
    std::map<std::vector<int32_t>, int64_t> hg, rg;
    for (size_t i = 0; i + n <= h.size(); ++i) ++hg[{h.begin() + i, h.begin() + i + n}];
    for (size_t i = 0; i + n <= r.size(); ++i) ++rg[{r.begin() + i, r.begin() + i + n}];
    matches[n - 1] += clipped_matches(hg, rg);
    this->hypothesis[n - 1] += h.size() >= n ? static_cast<int64_t>(h.size() - n + 1) : 0;
    this->reference[n - 1] += r.size() >= n ? static_cast<int64_t>(r.size() - n + 1) : 0;
  }
}

double ChrfStats::score(double beta) const {
  double precision = 0, recall = 0;
  int orders = 0;
  for (size_t n = 0; n < 6; ++n) {
    if (hypothesis[n] == 0 || reference[n] == 0) continue;
    precision += static_cast<double>(matches[n]) / static_cast<double>(hypothesis[n]);
    recall += static_cast<double>(matches[n]) / static_cast<double>(reference[n]);
    ++orders;
  }
  if (orders == 0) return 0;
  precision /= orders;
  recall /= orders;
  if (precision + recall == 0) return 0;
  const double b2 = beta * beta;
  return 100 * (1 + b2) * precision * recall / (b2 * precision + recall);
}

}  // namespace kglm::verbalize
