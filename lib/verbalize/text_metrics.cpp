#include "verbalize/text_metrics.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "tok/utf8.hpp"

namespace kglm::verbalize {

namespace {

bool digit(char c) { return c >= '0' && c <= '9'; }

// What Python's str.isspace() calls whitespace (sacreBLEU splits with str.split()).
bool python_space(int32_t cp) {
  return (cp >= 0x09 && cp <= 0x0d) || (cp >= 0x1c && cp <= 0x20) || cp == 0x85 || cp == 0xa0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200a) || cp == 0x2028 || cp == 0x2029 || cp == 0x202f || cp == 0x205f || cp == 0x3000;
}

// 13a's always-split punctuation: ASCII punctuation except ' . , - (the regex class
// [{-~[-` -&(-+:-@/], whose space is harmless).
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

// The code points of s (an invalid byte counts as one code point of its own).
std::vector<int32_t> code_points(std::string_view s) {
  std::vector<int32_t> out;
  size_t i = 0;
  while (i < s.size()) {
    const size_t at = i;
    int32_t cp = tok::next_code_point(s, i);
    if (cp < 0) cp = -static_cast<int32_t>(static_cast<unsigned char>(s[at])) - 1;
    out.push_back(cp);
  }
  return out;
}

// The code points of s without whitespace.
std::vector<int32_t> characters(std::string_view s) {
  std::vector<int32_t> out = code_points(s);
  std::erase_if(out, python_space);
  return out;
}

// s split on whitespace, byte ranges of the words.
std::vector<std::string> split_words(std::string_view s) {
  std::vector<std::string> words;
  std::string word;
  size_t i = 0;
  while (i < s.size()) {
    const size_t at = i;
    const int32_t cp = tok::next_code_point(s, i);
    if (cp >= 0 && python_space(cp)) {
      if (!word.empty()) words.push_back(std::move(word));
      word.clear();
    } else {
      word.append(s.substr(at, i - at));
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

// One pass of a two-character regex substitution, applied left to right without overlaps as
// Python's re.sub does: where first(a) and second(b) hold for adjacent characters a b, emit(a, b).
// Byte-wise is exact here: every pattern names an ASCII byte on one side, and a UTF-8 sequence
// never holds one.
template <class First, class Second, class Emit>
std::string substitute_pairs(const std::string& s, First first, Second second, Emit emit) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    if (i + 1 < s.size() && first(s[i]) && second(s[i + 1])) {
      emit(out, s[i], s[i + 1]);
      i += 2;
    } else {
      out += s[i++];
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> bleu_tokens(std::string_view sentence) {
  // sacreBLEU strips trailing whitespace first, then 13a's language-independent part.
  std::vector<int32_t> cps = code_points(sentence);
  size_t keep = sentence.size();
  for (size_t k = cps.size(); k > 0 && python_space(cps[k - 1]); --k) {
    const int32_t cp = cps[k - 1];
    keep -= cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
  }
  std::string s(sentence.substr(0, keep));
  replace_all(s, "<skipped>", "");
  replace_all(s, "-\n", "");
  std::replace(s.begin(), s.end(), '\n', ' ');
  if (s.find('&') != std::string::npos) {
    replace_all(s, "&quot;", "\"");
    replace_all(s, "&amp;", "&");
    replace_all(s, "&lt;", "<");
    replace_all(s, "&gt;", ">");
  }
  std::string spaced = " ";
  for (char c : s) {
    if (always_split(c)) {
      spaced += ' ';
      spaced += c;
      spaced += ' ';
    } else {
      spaced += c;
    }
  }
  spaced += ' ';
  const auto period_or_comma = [](char c) { return c == '.' || c == ','; };
  const auto not_digit = [](char c) { return !digit(c); };
  spaced = substitute_pairs(spaced, not_digit, period_or_comma, [](std::string& out, char a, char b) {
    out += a;
    out += ' ';
    out += b;
    out += ' ';
  });
  spaced = substitute_pairs(spaced, period_or_comma, not_digit, [](std::string& out, char a, char b) {
    out += ' ';
    out += a;
    out += ' ';
    out += b;
  });
  spaced = substitute_pairs(
      spaced, digit, [](char c) { return c == '-'; },
      [](std::string& out, char a, char b) {
        out += a;
        out += ' ';
        out += b;
        out += ' ';
      });
  return split_words(spaced);
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
  if (std::all_of(matches.begin(), matches.end(), [](int64_t m) { return m == 0; })) return 0;
  double log_sum = 0, smoothing = 1;
  for (size_t n = 0; n < 4; ++n) {
    if (totals[n] == 0) return 0;  // sacreBLEU: log(0) of the orders left
    const double total = static_cast<double>(totals[n]);
    if (matches[n] == 0) {
      smoothing *= 2;
      log_sum += std::log(1 / (smoothing * total));
    } else {
      log_sum += std::log(static_cast<double>(matches[n]) / total);
    }
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
    // As sacreBLEU: a sentence's hypothesis n-grams count only where its reference has n-grams.
    if (r.size() < n) continue;
    this->hypothesis[n - 1] += h.size() >= n ? static_cast<int64_t>(h.size() - n + 1) : 0;
    this->reference[n - 1] += static_cast<int64_t>(r.size() - n + 1);
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
