#include "train/tasks/qa_scores.hpp"

#include <unicode/locid.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <algorithm>
#include <map>

#include "core/error.hpp"
#include "text/unicode.hpp"

namespace kglm::train::tasks {

namespace {

using CodePoints = std::u32string;

CodePoints lower_code_points(std::string_view text) {
  icu::UnicodeString s = icu::UnicodeString::fromUTF8(icu::StringPiece(text.data(), static_cast<int32_t>(text.size())));
  s.toLower(icu::Locale::getRoot());
  CodePoints out;
  for (int32_t i = 0; i < s.length();) {
    const UChar32 c = s.char32At(i);
    out.push_back(static_cast<char32_t>(c));
    i += U16_LENGTH(c);
  }
  return out;
}

bool ascii_punctuation(char32_t c) {  // Python's string.punctuation
  return c < 0x80 &&
         std::string_view("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~").find(static_cast<char>(c)) != std::string_view::npos;
}

bool unicode_punctuation(char32_t c) { return (U_GET_GC_MASK(static_cast<UChar32>(c)) & U_GC_P_MASK) != 0; }

bool python_word(char32_t c) {  // re's \w on str: str.isalnum() or '_'
  return c == U'_' || (U_GET_GC_MASK(static_cast<UChar32>(c)) & (U_GC_L_MASK | U_GC_N_MASK)) != 0;
}

bool python_space(char32_t c) {  // str.split()'s separators
  return (c >= 0x1C && c <= 0x1F) || u_hasBinaryProperty(static_cast<UChar32>(c), UCHAR_WHITE_SPACE);
}

bool mlqa_cjk(char32_t c) { return c >= 0x4E00 && c <= 0x9FA5; }

const std::vector<CodePoints>& articles(QaRules rules, std::string_view lang) {
  static const std::map<std::string, std::vector<CodePoints>, std::less<>> table{
      {"en", {U"a", U"an", U"the"}},
      {"es", {U"un", U"una", U"unos", U"unas", U"el", U"la", U"los", U"las"}},
      {"de", {U"ein", U"eine", U"einen", U"einem", U"eines", U"einer", U"der", U"die", U"das", U"den", U"dem", U"des"}},
      {"vi", {U"của", U"là", U"cái", U"chiếc", U"những"}},
  };
  static const std::vector<CodePoints> none;
  if (rules == QaRules::squad) return table.find("en")->second;
  const auto it = table.find(lang);
  return it == table.end() ? none : it->second;
}

// re.sub(r"\b(w1|w2|…)\b", " ", text): an article is replaced where it stands as a whole word.
CodePoints remove_articles(const CodePoints& text, const std::vector<CodePoints>& words) {
  if (words.empty()) return text;
  CodePoints out;
  size_t i = 0;
  while (i < text.size()) {
    bool replaced = false;
    if (i == 0 || !python_word(text[i - 1])) {
      for (const CodePoints& w : words) {
        const size_t end = i + w.size();
        if (end <= text.size() && text.compare(i, w.size(), w) == 0 &&
            (end == text.size() || !python_word(text[end]))) {
          out.push_back(U' ');
          i = end;
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out.push_back(text[i++]);
  }
  return out;
}

// re.sub('\sال^|ال', ' ', text): the first alternative never matches (^ after a character), so
// every "ال" becomes a space.
CodePoints remove_arabic_article(const CodePoints& text) {
  CodePoints out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (i + 1 < text.size() && text[i] == U'\u0627' && text[i + 1] == U'\u0644') {
      out.push_back(U' ');
      ++i;
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

void split_at_space(const CodePoints& text, std::vector<CodePoints>& tokens) {
  CodePoints token;
  for (char32_t c : text) {
    if (python_space(c)) {
      if (!token.empty()) tokens.push_back(std::move(token));
      token.clear();
    } else {
      token.push_back(c);
    }
  }
  if (!token.empty()) tokens.push_back(std::move(token));
}

std::vector<CodePoints> normalized_tokens(std::string_view text, QaRules rules, std::string_view lang) {
  CodePoints s = lower_code_points(text);
  std::erase_if(s,
                [&](char32_t c) { return ascii_punctuation(c) || (rules == QaRules::mlqa && unicode_punctuation(c)); });
  s = rules == QaRules::mlqa && lang == "ar" ? remove_arabic_article(s) : remove_articles(s, articles(rules, lang));
  std::vector<CodePoints> tokens;
  if (rules == QaRules::mlqa && lang == "zh") {
    // Mixed segmentation: each CJK character (or punctuation, removed by now) a token of its own.
    CodePoints run;
    for (char32_t c : s) {
      if (mlqa_cjk(c) || unicode_punctuation(c) || ascii_punctuation(c)) {
        split_at_space(run, tokens);
        run.clear();
        tokens.push_back(CodePoints(1, c));
      } else {
        run.push_back(c);
      }
    }
    split_at_space(run, tokens);
  } else {
    split_at_space(s, tokens);
  }
  return tokens;
}

std::string utf8(const CodePoints& cps) {
  std::string out;
  for (char32_t c : cps) text::append_utf8(out, static_cast<uint32_t>(c));
  return out;
}

}  // namespace

QaRules qa_rules_for(std::string_view lang) { return lang.empty() || lang == "en" ? QaRules::squad : QaRules::mlqa; }

std::vector<std::string> answer_tokens(std::string_view text, QaRules rules, std::string_view lang) {
  std::vector<std::string> out;
  for (const CodePoints& t : normalized_tokens(text, rules, lang)) out.push_back(utf8(t));
  return out;
}

std::string normalize_answer(std::string_view text, QaRules rules, std::string_view lang) {
  std::string out;
  for (const std::string& t : answer_tokens(text, rules, lang)) out += (out.empty() ? "" : " ") + t;
  return out;
}

double answer_exact_match(std::string_view prediction, std::string_view gold, QaRules rules, std::string_view lang) {
  return normalize_answer(prediction, rules, lang) == normalize_answer(gold, rules, lang) ? 1.0 : 0.0;
}

namespace {

// Token F1 of two normalised answers (the evaluators' Counter intersection).
double token_f1(const std::vector<std::string>& p, const std::vector<std::string>& g) {
  std::map<std::string_view, int64_t> counts;
  for (const std::string& t : g) ++counts[t];
  int64_t same = 0;
  for (const std::string& t : p)
    if (auto it = counts.find(t); it != counts.end() && it->second > 0) {
      --it->second;
      ++same;
    }
  if (same == 0) return 0;
  const double precision = static_cast<double>(same) / static_cast<double>(p.size());
  const double recall = static_cast<double>(same) / static_cast<double>(g.size());
  return 2 * precision * recall / (precision + recall);
}

}  // namespace

double answer_f1(std::string_view prediction, std::string_view gold, QaRules rules, std::string_view lang) {
  return token_f1(answer_tokens(prediction, rules, lang), answer_tokens(gold, rules, lang));
}

QaScores score_answers(const std::vector<std::string>& predictions, const std::vector<std::vector<std::string>>& golds,
                       const std::vector<std::string>& langs) {
  if (predictions.size() != golds.size() || langs.size() != golds.size())
    throw Error("QA scores: predictions, gold answers and languages differ in number");
  QaScores s;
  for (size_t i = 0; i < golds.size(); ++i) {
    if (golds[i].empty()) continue;
    const QaRules rules = qa_rules_for(langs[i]);
    // Normalised answers are their tokens joined by single spaces: equal answers, equal tokens.
    const std::vector<std::string> prediction = answer_tokens(predictions[i], rules, langs[i]);
    double em = 0, f1 = 0;
    for (const std::string& g : golds[i]) {
      const std::vector<std::string> gold = answer_tokens(g, rules, langs[i]);
      em = std::max(em, prediction == gold ? 1.0 : 0.0);
      f1 = std::max(f1, token_f1(prediction, gold));
    }
    s.exact_match += em;
    s.f1 += f1;
    ++s.questions;
  }
  if (s.questions > 0) {
    s.exact_match /= static_cast<double>(s.questions);
    s.f1 /= static_cast<double>(s.questions);
  }
  return s;
}

}  // namespace kglm::train::tasks
