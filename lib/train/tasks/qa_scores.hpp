// Exact match and token F1 of extractive QA answers, defined as the official evaluation scripts
// define them (written here from their rules: no package carries the scripts):
//  - squad: SQuAD v1.1's evaluate-v1.1.py — lower-case, drop ASCII punctuation (Python's
//    string.punctuation), drop the articles a/an/the as whole words, split at white space;
//  - mlqa: MLQA's mlqa_evaluation_v1.py — lower-case, drop every Unicode punctuation character
//    (categories P*) and string.punctuation, drop the language's articles (en a/an/the; es
//    un/una/unos/unas/el/la/los/las; de ein/eine/einen/einem/eines/einer/der/die/das/den/dem/des;
//    vi của/là/cái/chiếc/những; ar every "ال"; hi and zh none), then split zh by "mixed
//    segmentation" (each CJK character U+4E00–U+9FA5 a token, the rest at white space) and the
//    other languages at white space. The script knows those seven languages only; kglm scores any
//    other language as it scores hi (no articles, white space).
// Both: a prediction's score on a question is its best over the gold answers; F1 counts the
// tokens the prediction and a gold answer share (a multiset), 0 when they share none. Python's
// lower() is ICU's root-locale lower-casing, its \w a letter, a number or '_', its split() the
// White_Space characters and U+001C–U+001F.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kglm::train::tasks {

enum class QaRules : uint8_t { squad, mlqa };

// The rules kglm scores a language by: SQuAD v1.1's for English (and an unknown language, ""),
// MLQA's for every other.
QaRules qa_rules_for(std::string_view lang);

std::string normalize_answer(std::string_view text, QaRules rules, std::string_view lang);
// The normalised answer's tokens.
std::vector<std::string> answer_tokens(std::string_view text, QaRules rules, std::string_view lang);

double answer_exact_match(std::string_view prediction, std::string_view gold, QaRules rules, std::string_view lang);
double answer_f1(std::string_view prediction, std::string_view gold, QaRules rules, std::string_view lang);

struct QaScores {
  double exact_match = 0, f1 = 0;  // means over the scored questions, in [0, 1]
  int64_t questions = 0;           // scored: those with at least one gold answer
};

// predictions[i] answers the question whose gold answers are golds[i], in language langs[i].
QaScores score_answers(const std::vector<std::string>& predictions, const std::vector<std::vector<std::string>>& golds,
                       const std::vector<std::string>& langs);

}  // namespace kglm::train::tasks
